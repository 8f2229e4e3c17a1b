package tower

// fault_internal_test.go: how faultsAsErrors reads a panic. A fault with no address (the
// runtime gives none below the first page, and qemu-user passes none at all) is the
// mapped file's only when a mapped file has shrunk; anything else is a bug and goes on.

import (
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
)

// shrunkRes is a Residency whose only answer is which file has shrunk.
type shrunkRes struct {
	ckpt.Residency
	shrunk string
}

func (r shrunkRes) FileAt(uintptr) string { return "" }
func (r shrunkRes) Shrunk() string        { return r.shrunk }

var sink *int

// faultWithoutAddress reads through a nil pointer under faultsAsErrors: a memory fault
// that carries no address.
func faultWithoutAddress(e *Engine) (err error) {
	defer e.faultsAsErrors()(&err)
	return errorIf(*sink == 1)
}

func errorIf(bool) error { return nil }

func TestFaultWithoutAddressNamesTheShrunkFile(t *testing.T) {
	e := &Engine{Res: shrunkRes{shrunk: "/ckpt/model.safetensors"}}
	err := faultWithoutAddress(e)
	if err == nil || !strings.Contains(err.Error(), "/ckpt/model.safetensors") || !strings.Contains(err.Error(), "changed while the run had it mapped") {
		t.Fatalf("a fault while a mapped file shrank: %v", err)
	}
}

func TestFaultWithNothingShrunkIsABug(t *testing.T) {
	e := &Engine{Res: shrunkRes{}}
	defer func() {
		if recover() == nil {
			t.Fatal("a nil dereference with every file whole became an error, not a panic")
		}
	}()
	faultWithoutAddress(e)
}
