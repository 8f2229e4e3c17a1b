//go:build darwin

package metal

// metal_darwin_test.go: on a Mac, the backend on the GPU — every op of
// backend_shared_test.go, and here the whole tiny tower in both residency arms against the
// CPU engine and transformers. On Linux this file is only type-checked (typecheck_test.go).
//
// Invariant: the Metal run wraps each residency region once (no-copy) and copies no
// weight, and reports real, positive GPU pass times. Mutation that would silently break
// it: reading GPUStartTime/GPUEndTime before WaitUntilCompleted — both read 0, every pass
// time is 0, the numbers still match.

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// newTestBackend returns the Metal backend. A Mac that cannot run it at all (an Intel Mac,
// the Apple5 paravirtual GPU of a virtual machine, macOS before 14) skips with the reason;
// any other failure fails the test.
func newTestBackend(t testing.TB) *Backend {
	t.Helper()
	holdTestMemory(t) // unmapped after the Close below: no-copy buffers go first
	be, err := New()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("the Metal backend cannot run on this Mac: %v", err)
	}
	if err != nil {
		t.Fatalf("the Metal backend: %v", err)
	}
	b := be.(*Backend)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// Check passes (a first pass gave exact numbers) exactly when a backend can be made, and
// the device says what it is.
func TestAvailable(t *testing.T) {
	b := newTestBackend(t) // skips where Metal cannot run at all
	if err := Check(); err != nil || !Available() {
		t.Fatalf("Check() = %v on a Mac where New works", err)
	}
	if name := b.Name(); !strings.HasPrefix(name, "metal(") || name == "metal()" {
		t.Errorf("Name() = %q", name)
	}
	info, err := Device()
	if err != nil || info.Name == "" || info.Pipelines == 0 || info.CompileTime <= 0 {
		t.Errorf("Device() = %+v, %v", info, err)
	}
	t.Logf("%+v", info)
	// Metal runs with a family down (its ops on the fallback kernels), but on a Mac under test
	// that is a finding: each family's compile error is one.
	for _, e := range info.FamilyErrors {
		t.Errorf("a kernel family did not build: %s", e)
	}
}

// A pass's time is the GPU's: positive, and not more than the wall time around Commit.
func TestPassTimeIsGPUTime(t *testing.T) {
	be := newTestBackend(t)
	const rows, in, out = 512, 1024, 1024
	ws := regionOf(t, true, false, 256, 0, dtype.F32, make([]float32, out*in))
	x, _ := be.Alloc(rows * in)
	y, _ := be.Alloc(rows * out)
	be.MatMul(backend.View{Buf: y}, backend.View{Buf: x}, ws[0], backend.Weight{}, rows, in, out)
	start := time.Now()
	d, err := be.Commit()
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GPU %v, wall %v", d, wall)
	if d <= 0 || d > wall {
		t.Errorf("pass time %v, want in (0, %v]", d, wall)
	}
}
