// Package metal is the Metal backend of the vision engine (macOS, Apple silicon): every
// backend.Backend primitive as a kernel of package shaders, encoded into one command buffer
// per pass, with the weights bound in place from the residency's regions.
//
// The backend is written in two layers. Backend (this file, every platform) is the engine
// side: views to operands, shape and overlap checks, weight binding, one dispatch per
// segment, the pass bookkeeping. It drives a gpu: Metal through darwinkit on macOS
// (gpu_darwin.go); on Linux the tests drive it with the C++ kernel harness, so all of this
// layer runs the real tower in CI. New and Available are in new_darwin.go / new_other.go.
//
// Invariant: ops run in call order, and the host never sees or changes a buffer while
// encoded work on it is pending: Upload, Download and Free first wait for the pending pass
// (Free defers the release instead). Mutation that would silently break it: letting
// Download copy without flushing — it would return the previous pass's values, finite and
// plausible (the tests compare a Download right after an op with the CPU backend).
package metal

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// devBuffer is a gpu's buffer handle (an MTLBuffer on macOS).
type devBuffer any

// gpu is what Backend needs from a device.
type gpu interface {
	name() string
	// newBuffer returns a zeroed buffer of n bytes in memory the host and the GPU share,
	// and the host's view of it. Zeroed is the device's promise (Metal's newBufferWithLength
	// clears the buffer it returns): Alloc does not clear it again.
	newBuffer(n int) (devBuffer, []byte, error)
	// wrap returns a buffer over mem without copying: mem starts on a page boundary, the
	// buffer covers it rounded up to whole pages of page bytes (the mapping covers those
	// too), and the memory stays mapped until the buffer is released.
	wrap(mem []byte, page int) (devBuffer, error)
	release(b devBuffer)
	// supports says whether the device has a pipeline for kernel (every kernel but those of a
	// unit that did not compile and optional ones it failed to make: metal/units.go).
	supports(kernel string) bool
	// encode appends a dispatch to the open pass.
	encode(d shaders.Dispatch)
	// commit runs the open pass, waits for it and returns its GPU time.
	commit() (time.Duration, error)
	close()
}

// Backend implements backend.Backend over a gpu.
type Backend struct {
	mu       sync.Mutex
	dev      gpu
	pageSize int
	pending  bool          // dispatches encoded since the last commit
	elapsed  time.Duration // GPU time of passes committed since the last Commit
	// modelled time of the open command buffer on the slowest GPU; past budget it is committed
	// (watchdog.go)
	openEstimate time.Duration
	budget       time.Duration // the most a command buffer holds (passBudget)
	opBudget     time.Duration // the most one dispatch takes (dispatchBudget)
	log          *ModelLog     // NewModel, NewProfiled: every dispatch, with its estimate (and time)
	err          error         // a failure seen outside Commit, reported by the next Commit
	weights      weightCache
	passTemp     []devBuffer // released once the open pass has completed
	live         map[*Buffer]struct{}
	closed       bool
	// without are the units this backend runs without (WithoutFamily), counted: their ops run
	// the fallback kernels as on a GPU where they did not compile
	without map[string]int
	// dispatched counts the dispatches encoded per kernel (the start-up probe checks that it
	// ran every pipeline the device made: probe.go)
	dispatched map[string]int
}

var _ backend.Backend = (*Backend)(nil)

func newBackend(dev gpu, pageSize int) *Backend {
	b := &Backend{dev: dev, pageSize: pageSize, live: map[*Buffer]struct{}{}, budget: passBudget, opBudget: dispatchBudget,
		without: map[string]int{}, dispatched: map[string]int{}}
	b.weights = newWeightCache(b)
	return b
}

// Buffer is float32 activation memory shared by the host and the GPU.
type Buffer struct {
	dev devBuffer
	f   []float32 // host view; nil after Free
}

// Len is the number of float32 elements (0 after Free).
func (b *Buffer) Len() int { return len(b.f) }

// Bind: a pass on the GPU runs to its end once committed; the engine checks the context
// between passes (and between MLP tiles), so a cancel waits at most for one pass.
func (b *Backend) Bind(context.Context) {}

// Caps: ops run on the GPU at Commit; pass times are the GPU's.
func (b *Backend) Caps() backend.Caps { return backend.Caps{} }

// Name identifies the backend in timings and reports.
func (b *Backend) Name() string { return "metal(" + b.dev.name() + ")" }

// Alloc returns a zeroed buffer of n float32: zeroed by the device (gpu.newBuffer), not
// cleared again here — at 65,536 patches the activations are GBs of memset for nothing.
func (b *Backend) Alloc(n int) (backend.Buffer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("metal: Alloc after Close")
	}
	if n < 0 {
		return nil, fmt.Errorf("metal: Alloc(%d): negative size", n)
	}
	dev, host, err := b.dev.newBuffer(4 * max(n, 1))
	if err != nil {
		return nil, fmt.Errorf("metal: Alloc(%d floats): %v", n, err)
	}
	mb := &Buffer{dev: dev, f: floatsOf(host)[:n]}
	b.live[mb] = struct{}{}
	return mb, nil
}

// Free releases the buffer; a pass still pending that uses it keeps it until it completes.
// After Close (which released every buffer) it does nothing.
func (b *Backend) Free(buf backend.Buffer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	mb, ok := buf.(*Buffer)
	if !ok || mb.dev == nil {
		return
	}
	b.retire(mb.dev)
	delete(b.live, mb)
	mb.dev, mb.f = nil, nil
}

// retire releases dev now, or after the open pass when one is pending.
func (b *Backend) retire(dev devBuffer) {
	if b.pending {
		b.passTemp = append(b.passTemp, dev)
		return
	}
	b.dev.release(dev)
}

// Upload copies src into dst[0:len(src)], after the pending pass (ops run in call order).
func (b *Backend) Upload(dst backend.View, src []float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flush()
	copy(hostSpan(dst, len(src), "Upload dst"), src)
}

// Download copies src[0:len(dst)] into dst, after the pending pass has completed.
func (b *Backend) Download(dst []float32, src backend.View) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flush()
	copy(dst, hostSpan(src, len(dst), "Download src"))
}

// Commit ends a pass: it runs what was encoded, waits, and returns the GPU time of
// everything run since the previous Commit (passes flushed early by Upload/Download too).
func (b *Backend) Commit() (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flush()
	d, err := b.elapsed, b.err
	b.elapsed, b.err = 0, nil
	return d, err
}

// flush commits the open pass if there is one and releases what waited for it.
func (b *Backend) flush() {
	b.cut()
	for _, t := range b.passTemp {
		b.dev.release(t)
	}
	b.passTemp = b.passTemp[:0]
}

// cut commits the open command buffer and waits for it; what the pass holds for later
// (copies of slot weights, deferred frees) stays until flush, since the op being encoded may
// still bind it.
func (b *Backend) cut() {
	if b.pending {
		d, err := b.dev.commit()
		b.pending = false
		b.elapsed += d
		if b.log != nil {
			b.log.committed(d)
		}
		if err != nil && b.err == nil {
			b.err = fmt.Errorf("metal: pass failed: %w", err)
		}
	}
	b.openEstimate = 0
}

// has says whether this backend runs kernel: the device has its pipeline and the kernel's unit
// is not one the backend runs without.
func (b *Backend) has(kernel string) bool {
	return b.without[shaders.UnitOf(kernel)] == 0 && b.dev.supports(kernel)
}

// WithoutFamily makes this backend run its ops as on a GPU where the unit family (shaders.Units:
// "matmul", "flash") did not compile — on the fallback kernels — until restore is called: the
// conformance table's fallback cases check those kernels on any GPU (conformance.Degrader). A
// family without a fallback, or whose fallback kernels this GPU has no pipeline for, is an
// error.
func (b *Backend) WithoutFamily(family string) (restore func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.canRunWithout(family); err != nil {
		return nil, err
	}
	b.without[family]++
	return sync.OnceFunc(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.without[family]--
	}), nil
}

// canRunWithout says why the backend cannot run without family (nil when it can): no such
// family with a fallback, or a fallback kernel this GPU has no pipeline for.
func (b *Backend) canRunWithout(family string) error {
	u, ok := shaders.UnitNamed(family)
	if !ok || u.Fallback == "" {
		return fmt.Errorf("metal: %q is no kernel family with a fallback", family)
	}
	for _, k := range u.Kernels() {
		if fb := shaders.FallbackKernel(k); !b.dev.supports(fb) {
			return fmt.Errorf("metal: cannot run without %s: its fallback %s has no pipeline on this GPU", u.What, fb)
		}
	}
	return nil
}

// encode appends a dispatch to the open pass (skipping empty ones), and commits the pass once
// it holds more than the watchdog budget (watchdog.go).
func (b *Backend) encode(d shaders.Dispatch) {
	if b.closed {
		panic("metal: backend used after Close")
	}
	if d.Empty() {
		return
	}
	if b.log != nil {
		b.log.add(d)
	}
	b.dev.encode(d)
	b.dispatched[d.Kernel]++
	b.pending = true
	if b.openEstimate += slowestGPU.Estimate(d.Cost).Time; b.openEstimate >= b.budget {
		b.cut()
	}
}

// Close waits for pending work and releases every buffer still allocated, the weights'
// wrappers and copies, and the queue (the process's device and pipelines stay for the next
// backend). Call it before the residency whose regions were bound unmaps them
// (engine.Engine.Close does). A second Close does nothing.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.flush()
	b.weights.releaseAll()
	for mb := range b.live {
		b.dev.release(mb.dev)
		mb.dev, mb.f = nil, nil
	}
	clear(b.live)
	b.closed = true
	b.dev.close()
	err := b.err
	b.err = nil
	return err
}
