//go:build darwin

package metal

// gpu_darwin.go: the gpu of Backend on Metal, through darwinkit. The library is compiled
// once at start from shaders.Library() with fast math off and MSL 3.1 (bfloat: macOS 14+);
// one command buffer and one compute encoder per pass; commit waits and reads the pass's
// GPU start and end times.
//
// Invariant: every object this file creates with new* (device, queue, library, functions,
// pipelines, buffers) is released exactly once, and the autoreleased ones (command buffer,
// encoder) are retained for the life of the pass and released at commit; all calls run
// inside an autorelease pool. Mutation that would silently break it: binding buffers with
// SetBufferOffsetAtIndex(offset, index) — darwinkit's name for setBufferOffset:atIndex:,
// which moves the previous binding instead of binding this buffer; the right call is
// SetBufferOffsetAtIndex_ (setBuffer:offset:atIndex:). The type-check test guards it.

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	mtl "github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
	"github.com/turbospark/inspector/shaders"
)

// languageVersion3_1 is MTLLanguageVersion3_1 ((3 << 16) + 1), which darwinkit v0.5.0 does
// not list: the first version with bfloat (macOS 14).
const languageVersion3_1 = mtl.LanguageVersion(3<<16 | 1)

// simdWidth is what the kernels assume (layer_norm and attention use one simdgroup of 32).
const simdWidth = 32

type pipeline struct {
	state      mtl.ComputePipelineStateObject
	maxThreads int
}

type metalGPU struct {
	device    mtl.DeviceObject
	queue     mtl.CommandQueueObject
	pipelines map[string]pipeline
	maxBuffer int
	open      bool // a pass is being encoded
	cmd       mtl.CommandBufferObject
	enc       mtl.ComputeCommandEncoderObject
}

func newMetalGPU() (*metalGPU, error) {
	dev, ok := defaultDevice()
	if !ok {
		return nil, errors.New("metal: no Metal device (MTLCreateSystemDefaultDevice returned nil)")
	}
	g := &metalGPU{device: dev, pipelines: map[string]pipeline{}}
	var err error
	objc.WithAutoreleasePool(func() { err = g.build() })
	if err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

// build makes the queue, compiles the library and one pipeline per kernel.
func (g *metalGPU) build() error {
	g.queue = g.device.NewCommandQueue()
	if g.queue.IsNil() {
		return errors.New("metal: newCommandQueue returned nil")
	}
	g.maxBuffer = int(g.device.MaxBufferLength())
	opts := mtl.NewCompileOptions() // autoreleased by darwinkit: not released here
	opts.SetFastMathEnabled(false)  // parity with the CPU engine: IEEE exp, tanh, division
	opts.SetLanguageVersion(languageVersion3_1)
	var nsErr foundation.Error
	lib := g.device.NewLibraryWithSourceOptionsError(shaders.Library(), opts, unsafe.Pointer(&nsErr))
	if lib.IsNil() {
		return fmt.Errorf("metal: compiling the kernels (MSL 3.1 needs macOS 14 or later): %v", foundation.ToGoError(nsErr))
	}
	defer lib.Release()
	for _, name := range shaders.Kernels() {
		if err := g.addPipeline(lib, name); err != nil {
			return err
		}
	}
	return nil
}

func (g *metalGPU) addPipeline(lib mtl.LibraryObject, name string) error {
	fn := lib.NewFunctionWithName(name)
	if fn.IsNil() {
		return fmt.Errorf("metal: the library has no function %s", name)
	}
	defer fn.Release()
	var nsErr foundation.Error
	ps := g.device.NewComputePipelineStateWithFunctionError(fn, unsafe.Pointer(&nsErr))
	if ps.IsNil() {
		return fmt.Errorf("metal: pipeline %s: %v", name, foundation.ToGoError(nsErr))
	}
	if w := ps.ThreadExecutionWidth(); w != simdWidth {
		ps.Release()
		return fmt.Errorf("metal: pipeline %s runs %d-wide simdgroups; the kernels need %d", name, w, simdWidth)
	}
	if max, need := int(ps.MaxTotalThreadsPerThreadgroup()), shaders.ThreadgroupSize(name); max < need {
		ps.Release()
		return fmt.Errorf("metal: pipeline %s allows %d threads per threadgroup; it is dispatched with %d", name, max, need)
	}
	g.pipelines[name] = pipeline{state: ps, maxThreads: int(ps.MaxTotalThreadsPerThreadgroup())}
	return nil
}

func (g *metalGPU) name() string {
	var n string
	objc.WithAutoreleasePool(func() { n = g.device.Name() })
	return n
}

func (g *metalGPU) newBuffer(n int) (devBuffer, []byte, error) {
	var buf mtl.BufferObject
	objc.WithAutoreleasePool(func() {
		buf = g.device.NewBufferWithLengthOptions(uint(n), mtl.ResourceStorageModeShared)
	})
	if buf.IsNil() {
		return nil, nil, fmt.Errorf("newBufferWithLength(%d) returned nil", n)
	}
	return buf, unsafe.Slice((*byte)(buf.Contents()), n), nil
}

// wrap makes a no-copy buffer over mem: page-aligned, rounded up to whole pages (mmap maps
// whole pages, so the rounded length is still mapped memory).
func (g *metalGPU) wrap(mem []byte) (devBuffer, error) {
	page := os.Getpagesize()
	n := (len(mem) + page - 1) / page * page
	if n > g.maxBuffer {
		return nil, fmt.Errorf("region of %d bytes exceeds the device's maximum buffer length %d", n, g.maxBuffer)
	}
	var buf mtl.BufferObject
	objc.WithAutoreleasePool(func() {
		buf = g.device.NewBufferWithBytesNoCopyLengthOptionsDeallocator(unsafe.Pointer(&mem[0]), uint(n),
			mtl.ResourceStorageModeShared, func(unsafe.Pointer, uint) {}) // the residency owns the memory
	})
	if buf.IsNil() {
		return nil, fmt.Errorf("newBufferWithBytesNoCopy of %d bytes returned nil", n)
	}
	return buf, nil
}

func (g *metalGPU) release(b devBuffer) {
	if buf, ok := b.(mtl.BufferObject); ok && !buf.IsNil() {
		buf.Release()
	}
}

// begin opens a pass: a command buffer and its compute encoder, retained until commit.
// The encoder's default (serial) dispatch type runs each dispatch after the previous one.
func (g *metalGPU) begin() {
	g.cmd = g.queue.CommandBuffer()
	g.cmd.Retain()
	g.enc = g.cmd.ComputeCommandEncoder()
	g.enc.Retain()
	g.open = true
}

func (g *metalGPU) encode(d shaders.Dispatch) {
	p, ok := g.pipelines[d.Kernel]
	if !ok {
		panic("metal: no pipeline for kernel " + d.Kernel)
	}
	if n := d.Threads[0] * d.Threads[1] * d.Threads[2]; n > p.maxThreads {
		panic(fmt.Sprintf("metal: %s: %d threads per threadgroup, the pipeline allows %d", d.Kernel, n, p.maxThreads))
	}
	objc.WithAutoreleasePool(func() {
		if !g.open {
			g.begin()
		}
		g.enc.SetComputePipelineState(p.state)
		for i, b := range d.Buffers {
			g.enc.SetBufferOffsetAtIndex_(b.Handle.(mtl.BufferObject), uint(b.Offset), uint(i))
		}
		g.enc.SetBytesLengthAtIndex(unsafe.Pointer(&d.Params[0]), uint(len(d.Params)), uint(len(d.Buffers)))
		g.enc.DispatchThreadgroupsThreadsPerThreadgroup(size(d.Groups), size(d.Threads))
	})
}

func size(v [3]int) mtl.Size {
	return mtl.Size{Width: uint64(v[0]), Height: uint64(v[1]), Depth: uint64(v[2])}
}

// commit ends the pass, runs it, waits, and returns its GPU time.
func (g *metalGPU) commit() (time.Duration, error) {
	if !g.open {
		return 0, nil
	}
	var d time.Duration
	var err error
	objc.WithAutoreleasePool(func() {
		mtl.CommandEncoderObject{Object: g.enc.Object}.EndEncoding() // EndEncoding lives on MTLCommandEncoder
		g.cmd.Commit()
		g.cmd.WaitUntilCompleted()
		if g.cmd.Status() == mtl.CommandBufferStatusError {
			if err = foundation.ToGoError(g.cmd.Error()); err == nil {
				err = errors.New("command buffer status: error")
			}
		}
		d = time.Duration((float64(g.cmd.GPUEndTime()) - float64(g.cmd.GPUStartTime())) * float64(time.Second))
		g.enc.Release()
		g.cmd.Release()
	})
	g.open = false
	return d, err
}

func (g *metalGPU) close() {
	if g.open {
		g.commit()
	}
	for name, p := range g.pipelines {
		p.state.Release()
		delete(g.pipelines, name)
	}
	if !g.queue.IsNil() {
		g.queue.Release()
	}
	g.device.Release()
}
