//go:build !darwin

package metal

// new_other_test.go: off macOS, New says plainly that Metal needs macOS.
//
// Invariant: New fails with a message naming macOS and this platform. Mutation that would
// silently break it: a generic "unavailable" message — the CLI would print it for
// --backend metal and the user would not learn why.

import (
	"runtime"
	"strings"
	"testing"
)

func TestNewSaysMetalNeedsMacOS(t *testing.T) {
	be, err := New()
	if be != nil || err == nil {
		t.Fatalf("New() = %v, %v; want no backend and an error", be, err)
	}
	for _, want := range []string{"needs macOS", runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New() error %q does not say %q", err, want)
		}
	}
	if Available() {
		t.Error("Available() = true off macOS")
	}
}
