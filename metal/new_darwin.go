//go:build darwin

package metal

// new_darwin.go: New and Available on macOS.
//
// Invariant: New returns a backend only when the library compiled and every kernel has a
// pipeline; any failure is an error naming what failed. Mutation that would silently break
// it: ignoring a pipeline error — the first op of that kernel would panic mid-run.

import (
	"os"
	"sync"

	"github.com/turbospark/inspector/engine"
)

// New returns the Metal backend on the system's default GPU (Apple silicon, macOS 14+).
// The result is a *Backend (for AttentionRow, ReleaseWeights and Close).
func New() (engine.Backend, error) {
	g, err := newMetalGPU()
	if err != nil {
		return nil, err
	}
	return newBackend(g, os.Getpagesize()), nil
}

var available = sync.OnceValue(func() bool {
	dev, ok := defaultDevice()
	if ok {
		dev.Release()
	}
	return ok
})

// Available says whether this Mac has a Metal device. (New can still fail, e.g. before
// macOS 14, where MSL 3.1 is missing; its error says so.)
func Available() bool { return available() }
