//go:build !darwin

package metal

// new_other.go: off macOS there is no Metal; New says so plainly.
//
// Invariant: New never returns a usable backend here, and its error names the platform.
// Mutation that would silently break it: returning (nil, nil) — a caller that checks only
// the error would then run the engine on a nil backend and panic far from the cause.

import (
	"fmt"
	"runtime"

	"github.com/turbospark/inspector/engine"
)

// New returns the Metal backend; off macOS it returns an error.
func New() (engine.Backend, error) {
	return nil, fmt.Errorf("metal: the Metal backend needs macOS (this is %s/%s); use the CPU backend", runtime.GOOS, runtime.GOARCH)
}

// Available says whether New can succeed: never off macOS.
func Available() bool { return false }
