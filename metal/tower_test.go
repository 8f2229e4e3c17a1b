//go:build linux || darwin

package metal

// tower_test.go: the whole tiny tower through Backend, both residency arms, against the CPU
// engine and transformers — on Linux through the C++ kernel harness, on a Mac on the GPU
// (newTestBackend differs per platform).
//
// Invariant: each residency region is wrapped exactly once and no weight of the fixture
// is copied (its tensors are aligned). Mutation that would silently break it: keying
// wrappers on the Weight instead of its Region — results stay right, but every weight of
// a mapped checkpoint would become its own no-copy buffer (and the count here jumps).

import (
	"testing"

	"github.com/turbospark/inspector/engine"
)

func TestTower(t *testing.T) {
	for _, c := range []struct {
		mode  engine.ResidencyMode
		wraps int // mapped: the shard's vision span; pread: globals + 2 slots
	}{{engine.Mapped, 1}, {engine.Pread, 3}} {
		t.Run(string(c.mode), func(t *testing.T) {
			be := newTestBackend(t)
			checkTower(t, be, c.mode)
			if be.weights.wraps != c.wraps || be.weights.copied != 0 {
				t.Errorf("%s: %d regions wrapped and %d weights copied, want %d and 0", c.mode, be.weights.wraps, be.weights.copied, c.wraps)
			}
		})
	}
}
