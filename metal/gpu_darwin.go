//go:build darwin

package metal

// gpu_darwin.go: the gpu of Backend on Metal, through darwinkit. The process's Metal — the
// default device, the kernel library compiled unit by unit (shaders.Units, decided in
// units.go: a unit that does not compile costs its family, which runs its fallback kernels;
// safe math: mathMode Safe and precise FP32 functions where the compile options know them,
// macOS 15+, else fastMathEnabled NO; MSL 3.1 for bfloat: macOS 14+), one pipeline per
// kernel — is made once it can be (a failed build is tried again by the next New) and kept
// for the life of the process (metalContext); each Backend has its own command queue, one
// command buffer and one compute encoder per pass, and reads the pass's GPU start and end
// times at commit.
//
// Messages whose darwinkit wrapper would fail at run time are sent with objc.Call on the
// raw selector: the wrappers of newComputePipelineStateWithFunction:error:,
// setComputePipelineState: and setBuffer:offset:atIndex: pass their protocol-typed
// argument through objc.WrapAsProtocol, which panics for darwinkit's struct wrappers, and
// the wrapper of newBufferWithBytesNoCopy:length:options:deallocator: turns its Go func into
// a heap block (freed, then read, on Metal's thread). objc.Call passes a struct wrapper as
// its object pointer, and unsafe.Pointer(nil) as a real nil block. setMathMode: and
// setMathFloatingPointFunctions: (macOS 15) are not in darwinkit v0.5.0's bindings: they are
// sent raw, each only after respondsToSelector: said yes. darwinkit_audit_test.go follows
// every darwinkit call of this file into darwinkit's source and holds each raw send to the
// selector's generated binding (argument count and C kinds), or, for those two, to Apple's
// declaration and the respondsToSelector: guard around it.
//
// Invariant: every object this file creates with new* (queue, buffers) is released exactly
// once, the context's (device, library functions, pipelines) never; the autoreleased ones
// (command buffer, encoder) are retained for the life of the pass and released at commit;
// all calls, releases included, run inside an autorelease pool. Mutation that would silently break it: binding
// buffers with setBufferOffset:atIndex: (darwinkit's SetBufferOffsetAtIndex, no
// underscore), which moves the previous binding instead of binding this buffer; the right
// selector is setBuffer:offset:atIndex:, and the audit checks the selector we send.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	mtl "github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/shaders"
)

// languageVersion3_1 is MTLLanguageVersion3_1 ((3 << 16) + 1), which darwinkit v0.5.0 does
// not list: the first version with bfloat (macOS 14).
const languageVersion3_1 = mtl.LanguageVersion(3<<16 | 1)

// minMacOS is the first macOS with MSL 3.1.
const minMacOS = 14

// simdWidth is what the kernels assume (layer_norm and attention use one simdgroup of 32).
const simdWidth = 32

// Apple's MTLMathMode and MTLMathFloatingPointFunctions values (NSInteger enums, macOS 15).
const (
	mathModeSafe                      = 0
	mathFloatingPointFunctionsPrecise = 1
)

// minFamily is the first GPU family with the SIMD-scoped reductions (simd_sum, simd_max)
// the kernels use: Apple7, every Apple-silicon Mac (M1 and later). Intel Macs' GPUs and
// the paravirtual GPU of macOS virtual machines (Apple5) do not have it.
const minFamily = mtl.GPUFamilyApple7

type pipeline struct {
	state      mtl.ComputePipelineStateObject
	maxThreads int
	width      int // threadExecutionWidth
}

// metalContext is the process's Metal: made once, never released.
type metalContext struct {
	device    mtl.DeviceObject
	pipelines map[string]pipeline
	maxBuffer int
	info      DeviceInfo
}

// theContext is made by the first New that succeeds (a failed build is not kept: units.go's
// onceOK).
var theContext = onceOK[*metalContext]{make: func() (ctx *metalContext, err error) {
	defer recoverAsError(&err)
	objc.WithAutoreleasePool(func() { ctx, err = newMetalContext() })
	return ctx, err
}}

func sharedContext() (*metalContext, error) { return theContext.get() }

// recoverAsError turns a panic inside darwinkit into an error: the first Mac that meets an
// unforeseen failure gets a message, not a crash.
func recoverAsError(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("metal: internal error: %v", r)
	}
}

// macOSVersion is the product version ("14.5") and its major number.
func macOSVersion() (string, int) {
	v, err := unix.Sysctl("kern.osproductversion")
	if err != nil {
		return "unknown", 0
	}
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return v, major
}

func newMetalContext() (*metalContext, error) {
	osVersion, major := macOSVersion()
	if major != 0 && major < minMacOS {
		return nil, fmt.Errorf("%w: the kernels need macOS %d or later (MSL 3.1); this is macOS %s", ErrUnsupported, minMacOS, osVersion)
	}
	dev, ok := defaultDevice()
	if !ok {
		return nil, fmt.Errorf("%w: no Metal device (MTLCreateSystemDefaultDevice returned nil)", ErrUnsupported)
	}
	ctx := &metalContext{device: dev, pipelines: map[string]pipeline{}}
	family := highestAppleFamily(func(f int) bool { return dev.SupportsFamily(mtl.GPUFamily(f)) })
	ctx.info = DeviceInfo{Name: dev.Name(), Family: family, OS: "macOS " + osVersion,
		UnifiedMemory: dev.HasUnifiedMemory(), MaxBuffer: int64(dev.MaxBufferLength()),
		WorkingSet: int64(dev.RecommendedMaxWorkingSetSize())}
	if !dev.SupportsFamily(minFamily) {
		if family == "" {
			family = "no Apple family"
		}
		dev.Release()
		return nil, fmt.Errorf("%w: the kernels need an Apple7-family GPU (Apple silicon, M1 or later); %s supports %s",
			ErrUnsupported, ctx.info.Name, family)
	}
	ctx.maxBuffer = int(dev.MaxBufferLength())
	start := time.Now()
	if err := ctx.build(); err != nil {
		ctx.release()
		return nil, err
	}
	ctx.info.CompileTime = time.Since(start)
	ctx.info.Pipelines = len(ctx.pipelines)
	return ctx, nil
}

// compileOptions: MSL 3.1, and math that keeps the CPU engine's numbers (IEEE exp, tanh,
// division): mathMode Safe and the precise FP32 functions where the object knows them (macOS
// 15, where fastMathEnabled is deprecated), fastMathEnabled NO where it does not (macOS 14).
func compileOptions() mtl.CompileOptions {
	opts := mtl.NewCompileOptions() // autoreleased by darwinkit: not released here
	opts.SetLanguageVersion(languageVersion3_1)
	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int(mathModeSafe))
	} else {
		opts.SetFastMathEnabled(false)
	}
	if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathFloatingPointFunctions:"), int(mathFloatingPointFunctionsPrecise))
	}
	return opts
}

// build compiles the library unit by unit (newLibraryWithSource of each unit's text) and makes
// one pipeline per kernel; units.go decides what a failure costs, and releases the pipelines of
// a build that fails.
func (ctx *metalContext) build() error {
	opts := compileOptions()
	built, err := buildUnits(unitBuilder[mtl.LibraryObject, pipeline]{
		os: ctx.info.OS,
		compile: func(u shaders.Unit) (mtl.LibraryObject, error) {
			var nsErr foundation.Error
			lib := ctx.device.NewLibraryWithSourceOptionsError(u.Source(), opts, unsafe.Pointer(&nsErr))
			if lib.IsNil() {
				if err := foundation.ToGoError(nsErr); err != nil {
					return lib, err
				}
				return lib, errors.New("newLibraryWithSource returned nil without an error")
			}
			return lib, nil
		},
		pipeline: ctx.newPipeline,
		free:     func(lib mtl.LibraryObject) { lib.Release() },
		release:  func(p pipeline) { p.state.Release() },
	})
	if err != nil {
		return err
	}
	ctx.pipelines = built.pipelines
	ctx.info.Fallbacks, ctx.info.FamilyErrors = built.fallbacks, built.familyErrors
	for _, name := range shaders.Kernels() { // in the library's order, whatever the map's
		if p, ok := ctx.pipelines[name]; ok {
			ctx.info.PipelineInfo = append(ctx.info.PipelineInfo, PipelineInfo{Name: name, MaxThreads: p.maxThreads,
				ExecutionWidth: p.width})
		}
	}
	return nil
}

// newPipeline makes kernel name's pipeline from lib, checked for 32-wide simdgroups and the
// threads it is dispatched with.
func (ctx *metalContext) newPipeline(lib mtl.LibraryObject, name string) (pipeline, error) {
	fn := lib.NewFunctionWithName(name)
	if fn.IsNil() {
		return pipeline{}, fmt.Errorf("metal: the library has no function %s", name)
	}
	defer fn.Release()
	var nsErr foundation.Error
	ps := newPipelineState(ctx.device, fn, &nsErr)
	if ps.IsNil() {
		return pipeline{}, fmt.Errorf("metal: pipeline %s: %v", name, foundation.ToGoError(nsErr))
	}
	if w := ps.ThreadExecutionWidth(); w != simdWidth {
		ps.Release()
		return pipeline{}, fmt.Errorf("metal: pipeline %s runs %d-wide simdgroups; the kernels need %d", name, w, simdWidth)
	}
	if max, need := int(ps.MaxTotalThreadsPerThreadgroup()), shaders.ThreadgroupSize(name); max < need {
		ps.Release()
		return pipeline{}, fmt.Errorf("metal: pipeline %s allows %d threads per threadgroup; it is dispatched with %d", name, max, need)
	}
	return pipeline{state: ps, maxThreads: int(ps.MaxTotalThreadsPerThreadgroup()), width: simdWidth}, nil
}

// release is for a context that failed to build (a built one lives as long as the process;
// buildUnits released the pipelines of a build that failed, and no pipeline is made before).
func (ctx *metalContext) release() {
	objc.WithAutoreleasePool(func() { ctx.device.Release() })
}

// The raw sends (see the file comment for why not darwinkit's wrappers).

func newPipelineState(dev mtl.DeviceObject, fn mtl.FunctionObject, errOut *foundation.Error) mtl.ComputePipelineStateObject {
	return objc.Call[mtl.ComputePipelineStateObject](dev, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(errOut))
}

// metalGPU is one Backend's queue and open pass over the shared context.
type metalGPU struct {
	ctx   *metalContext
	queue mtl.CommandQueueObject
	open  bool // a pass is being encoded
	cmd   mtl.CommandBufferObject
	enc   mtl.ComputeCommandEncoderObject
}

func newMetalGPU() (g *metalGPU, err error) {
	ctx, err := sharedContext()
	if err != nil {
		return nil, err
	}
	defer recoverAsError(&err)
	g = &metalGPU{ctx: ctx}
	objc.WithAutoreleasePool(func() { g.queue = ctx.device.NewCommandQueue() })
	if g.queue.IsNil() {
		return nil, errors.New("metal: newCommandQueue returned nil")
	}
	return g, nil
}

func (g *metalGPU) name() string { return g.ctx.info.Name }

func (g *metalGPU) supports(kernel string) bool {
	_, ok := g.ctx.pipelines[kernel]
	return ok
}

func (g *metalGPU) newBuffer(n int) (devBuffer, []byte, error) {
	var buf mtl.BufferObject
	objc.WithAutoreleasePool(func() {
		buf = g.ctx.device.NewBufferWithLengthOptions(uint(n), mtl.ResourceStorageModeShared)
	})
	if buf.IsNil() {
		return nil, nil, fmt.Errorf("newBufferWithLength(%d) returned nil", n)
	}
	return buf, unsafe.Slice((*byte)(buf.Contents()), n), nil
}

// wrap makes a no-copy buffer over mem: page-aligned, rounded up to whole pages (mmap maps
// whole pages, so the rounded length is still mapped memory). The deallocator is a real
// nil: the residency owns the memory and unmaps it only after the buffer is released.
func (g *metalGPU) wrap(mem []byte, page int) (devBuffer, error) {
	n := (len(mem) + page - 1) / page * page
	if n > g.ctx.maxBuffer {
		return nil, fmt.Errorf("region of %d bytes exceeds the device's maximum buffer length %d", n, g.ctx.maxBuffer)
	}
	var buf mtl.BufferObject
	objc.WithAutoreleasePool(func() {
		buf = objc.Call[mtl.BufferObject](g.ctx.device, objc.Sel("newBufferWithBytesNoCopy:length:options:deallocator:"), unsafe.Pointer(&mem[0]), uint(n), mtl.ResourceStorageModeShared, unsafe.Pointer(nil))
	})
	if buf.IsNil() {
		return nil, fmt.Errorf("newBufferWithBytesNoCopy of %d bytes returned nil", n)
	}
	return buf, nil
}

func (g *metalGPU) release(b devBuffer) {
	if buf, ok := b.(mtl.BufferObject); ok && !buf.IsNil() {
		objc.WithAutoreleasePool(func() { buf.Release() })
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
	p, ok := g.ctx.pipelines[d.Kernel]
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
		objc.Call[objc.Void](g.enc, objc.Sel("setComputePipelineState:"), p.state)
		for i, b := range d.Buffers {
			objc.Call[objc.Void](g.enc, objc.Sel("setBuffer:offset:atIndex:"), b.Handle.(mtl.BufferObject), uint(b.Offset), uint(i))
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

// close ends a pending pass and releases the queue; the context stays for the next backend.
func (g *metalGPU) close() {
	if g.open {
		g.commit()
	}
	if !g.queue.IsNil() {
		objc.WithAutoreleasePool(func() { g.queue.Release() })
		g.queue = mtl.CommandQueueObject{}
	}
}
