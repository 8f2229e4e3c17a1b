//go:build linux

package metal

// harness_gpu_test.go: a gpu for Backend that runs each pass through the C++ kernel harness,
// so the whole backend — views, weight binding, passes, the engine's tower — runs on Linux
// with the real kernels. Buffers are host memory; a wrapped region is the region's own
// memory (no copy), sent to the driver read-only at every commit, as a GPU would read it.
//
// Invariant: a buffer released while a pending pass still uses it is recorded as a fault,
// not ignored. Mutation that would silently break it: checking releases against the
// committed passes instead of the pending one — Free before Commit would look harmless.

import (
	"fmt"
	"testing"
	"time"

	"github.com/turbospark/inspector/shaders"
	"github.com/turbospark/inspector/shaders/harness"
)

type hostBuf struct {
	mem      []byte
	wrapped  bool // a region's memory: read-only for kernels
	released bool
}

type harnessGPU struct {
	drv     *harness.Driver
	pending []shaders.Dispatch
	passes  int
	faults  []string
}

func (g *harnessGPU) name() string { return "C++ kernel harness" }

func (g *harnessGPU) newBuffer(n int) (devBuffer, []byte, error) {
	b := &hostBuf{mem: make([]byte, n)}
	return b, b.mem, nil
}

func (g *harnessGPU) wrap(mem []byte) (devBuffer, error) {
	return &hostBuf{mem: mem, wrapped: true}, nil
}

func (g *harnessGPU) release(d devBuffer) {
	b := d.(*hostBuf)
	if b.released {
		g.faults = append(g.faults, "buffer released twice")
	}
	for _, disp := range g.pending {
		for _, bind := range disp.Buffers {
			if bind.Handle == d {
				g.faults = append(g.faults, fmt.Sprintf("buffer released while pending %s uses it", disp.Kernel))
			}
		}
	}
	b.released = true
}

func (g *harnessGPU) encode(d shaders.Dispatch) { g.pending = append(g.pending, d) }

// commit sends the buffers the pending dispatches use, runs them, and copies the writable
// ones back.
func (g *harnessGPU) commit() (time.Duration, error) {
	start := time.Now()
	job := &harness.Job{}
	index := map[*hostBuf]int{}
	for _, d := range g.pending {
		rebound := d
		rebound.Buffers = make([]shaders.Binding, len(d.Buffers))
		for i, bind := range d.Buffers {
			b := bind.Handle.(*hostBuf)
			if b.released {
				return 0, fmt.Errorf("%s binds a released buffer", d.Kernel)
			}
			idx, ok := index[b]
			if !ok {
				idx = len(job.Buffers)
				index[b] = idx
				job.Buffers = append(job.Buffers, harness.Buffer{Data: b.mem, ReadOnly: b.wrapped})
			}
			rebound.Buffers[i] = shaders.Binding{Operand: shaders.Operand{Handle: idx, Offset: bind.Offset}, Align: bind.Align}
		}
		job.Dispatches = append(job.Dispatches, rebound)
	}
	g.pending = nil
	g.passes++
	err := g.drv.Run(job) // writable buffers are written back in place
	return time.Since(start), err
}

func (g *harnessGPU) close() {}

// newTestBackend returns a Backend over the harness; faults fail the test at cleanup.
func newTestBackend(t testing.TB) *Backend {
	g := &harnessGPU{drv: harness.Shared(t, false)}
	b := newBackend(g, pageSize())
	t.Cleanup(func() {
		b.Close()
		if len(g.faults) > 0 {
			t.Errorf("gpu faults: %v", g.faults)
		}
	})
	return b
}
