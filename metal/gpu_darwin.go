//go:build darwin

package metal

// gpu_darwin.go: the gpu of Backend on Metal, through darwinkit's objc package. The process's
// Metal — the default device, the kernel library compiled unit by unit (shaders.Units, decided
// in units.go: a unit that does not compile costs its family, which runs its fallback kernels;
// safe math: mathMode Safe and precise FP32 functions where the compile options know them,
// macOS 15+, else fastMathEnabled NO; MSL 3.1 for bfloat: macOS 14+), one pipeline per
// kernel — is made once it can be (a failed build is tried again by the next New) and kept
// for the life of the process (metalContext); each Backend has its own command queue, one
// command buffer and one compute encoder per pass, and reads the pass's GPU start and end
// times at commit.
//
// Every message is sent with objc.Call on its raw selector; darwinkit's generated bindings
// (macos/metal, macos/foundation) are not used, and not vendored (third_party/darwinkit's
// README). Their wrappers were also wrong for this backend: those of
// newComputePipelineStateWithFunction:error:, setComputePipelineState: and
// setBuffer:offset:atIndex: pass their protocol-typed argument through objc.WrapAsProtocol,
// which panics for a struct wrapper, and the one of
// newBufferWithBytesNoCopy:length:options:deallocator: turns its Go func into a heap block
// (freed, then read, on Metal's thread). objc.Call passes an object (a struct embedding
// objc.Object) as its pointer, a Go string as an autoreleased NSString (an NSString result
// comes back as a Go string, read through UTF8String), a struct of numbers by value, and
// unsafe.Pointer(nil) as a real nil block. setMathMode: and setMathFloatingPointFunctions:
// (macOS 15) are sent only after respondsToSelector: said yes. darwinkit_audit_test.go holds
// every send of this file to the declared shape of its selector (argument count, the C kind of
// each argument and of the result) and the macOS 15 ones to their guard; ffi_calllayer_test.go
// replays each through darwinkit's call layer.
//
// The C types: NSUInteger is Go's uint (64-bit), NSInteger int, BOOL bool, an enum its
// NS_ENUM's base type, MTLSize mtlSize (three NSUInteger, by value), CFTimeInterval float64.
//
// Invariant: every object this file creates with new* (queue, buffers, library, function,
// pipeline) is released exactly once, the context's (device, pipelines) never; the
// autoreleased ones (compile options, command buffer, encoder, NSStrings, NSErrors) are freed
// by the pool around their use, the command buffer and encoder retained for the life of the
// pass and released at commit; all calls, releases included, run inside an autorelease pool.
// Mutation that would silently break it: binding buffers with setBufferOffset:atIndex:,
// which moves the previous binding instead of binding this buffer; the right selector is
// setBuffer:offset:atIndex:, and the audit checks the selector and its argument count.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/objc"
	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/shaders"
)

// The Objective-C objects of the backend, each its pointer, typed by what it is so that one
// is not used for another.
type (
	mtlDevice         struct{ objc.Object } // id<MTLDevice>
	mtlCompileOptions struct{ objc.Object } // MTLCompileOptions
	mtlLibrary        struct{ objc.Object } // id<MTLLibrary>
	mtlFunction       struct{ objc.Object } // id<MTLFunction>
	mtlPipelineState  struct{ objc.Object } // id<MTLComputePipelineState>
	mtlCommandQueue   struct{ objc.Object } // id<MTLCommandQueue>
	mtlCommandBuffer  struct{ objc.Object } // id<MTLCommandBuffer>
	mtlComputeEncoder struct{ objc.Object } // id<MTLComputeCommandEncoder>
	mtlBuffer         struct{ objc.Object } // id<MTLBuffer>
	nsError           struct{ objc.Object } // NSError
)

// mtlSize is MTLSize: { NSUInteger width, height, depth; }, passed by value.
type mtlSize struct{ Width, Height, Depth uint64 }

// Apple's values (Metal/MTLDevice.h, MTLLibrary.h, MTLResource.h, MTLCommandBuffer.h).
const (
	// MTLGPUFamilyApple7 (NS_ENUM(NSInteger, MTLGPUFamily)): the first GPU family with the
	// SIMD-scoped reductions (simd_sum, simd_max) the kernels use, every Apple-silicon Mac (M1
	// and later). Intel Macs' GPUs and the paravirtual GPU of macOS virtual machines (Apple5)
	// do not have it.
	gpuFamilyApple7 int = 1007
	// MTLLanguageVersion3_1 ((3 << 16) + 1; NS_ENUM(NSUInteger)): the first version with
	// bfloat (macOS 14).
	languageVersion3_1 uint = 3<<16 | 1
	// MTLMathModeSafe and MTLMathFloatingPointFunctionsPrecise (NS_ENUM(NSInteger), macOS 15).
	mathModeSafe                      int = 0
	mathFloatingPointFunctionsPrecise int = 1
	// MTLResourceStorageModeShared (MTLStorageModeShared << MTLResourceStorageModeShift = 0;
	// NS_OPTIONS(NSUInteger, MTLResourceOptions)).
	resourceStorageModeShared uint = 0
	// MTLCommandBufferStatusError (NS_ENUM(NSUInteger, MTLCommandBufferStatus)).
	commandBufferStatusError uint = 5
)

// minMacOS is the first macOS with MSL 3.1.
const minMacOS = 14

// simdWidth is what the kernels assume (layer_norm and attention use one simdgroup of 32).
const simdWidth = 32

type pipeline struct {
	state      mtlPipelineState
	maxThreads int
	width      int // threadExecutionWidth
}

// metalContext is the process's Metal: made once, never released.
type metalContext struct {
	device    mtlDevice
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

// recoverAsError turns a panic inside darwinkit's objc package (objc.Call panics for a nil
// receiver) into an error: the first Mac that meets an unforeseen failure gets a message,
// not a crash.
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
	family := highestAppleFamily(func(f int) bool { return objc.Call[bool](dev, objc.Sel("supportsFamily:"), f) })
	ctx.info = DeviceInfo{Name: objc.Call[string](dev, objc.Sel("name")), Family: family, OS: "macOS " + osVersion,
		UnifiedMemory: objc.Call[bool](dev, objc.Sel("hasUnifiedMemory")),
		MaxBuffer:     int64(objc.Call[uint](dev, objc.Sel("maxBufferLength"))),
		WorkingSet:    int64(objc.Call[uint64](dev, objc.Sel("recommendedMaxWorkingSetSize")))}
	if !objc.Call[bool](dev, objc.Sel("supportsFamily:"), gpuFamilyApple7) {
		if family == "" {
			family = "no Apple family"
		}
		dev.Release()
		return nil, fmt.Errorf("%w: the kernels need an Apple7-family GPU (Apple silicon, M1 or later); %s supports %s",
			ErrUnsupported, ctx.info.Name, family)
	}
	ctx.maxBuffer = int(ctx.info.MaxBuffer)
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
// The object is autoreleased: the pool around the build frees it.
func compileOptions() (mtlCompileOptions, error) {
	opts := objc.Call[mtlCompileOptions](objc.GetClass("MTLCompileOptions"), objc.Sel("new")) // +1
	if opts.IsNil() {
		return opts, errors.New("metal: [MTLCompileOptions new] returned nil")
	}
	opts.Autorelease()
	objc.Call[objc.Void](opts, objc.Sel("setLanguageVersion:"), languageVersion3_1)
	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), mathModeSafe)
	} else {
		objc.Call[objc.Void](opts, objc.Sel("setFastMathEnabled:"), false)
	}
	if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathFloatingPointFunctions:"), mathFloatingPointFunctionsPrecise)
	}
	return opts, nil
}

// nsErrorOf is an NSError (autoreleased, read inside the pool it lives in) as a Go error: its
// localizedDescription and code; nil for nil.
func nsErrorOf(e nsError) error {
	if e.IsNil() {
		return nil
	}
	return fmt.Errorf("%s (NSError code %d)", objc.Call[string](e, objc.Sel("localizedDescription")), objc.Call[int](e, objc.Sel("code")))
}

// build compiles the library unit by unit (newLibraryWithSource of each unit's text) and makes
// one pipeline per kernel; units.go decides what a failure costs, and releases the pipelines of
// a build that fails.
func (ctx *metalContext) build() error {
	opts, err := compileOptions()
	if err != nil {
		return err
	}
	built, err := buildUnits(unitBuilder[mtlLibrary, pipeline]{
		os: ctx.info.OS,
		compile: func(u shaders.Unit) (mtlLibrary, error) {
			var nsErr nsError
			lib := objc.Call[mtlLibrary](ctx.device, objc.Sel("newLibraryWithSource:options:error:"), u.Source(), opts, unsafe.Pointer(&nsErr))
			if lib.IsNil() {
				if err := nsErrorOf(nsErr); err != nil {
					return lib, err
				}
				return lib, errors.New("newLibraryWithSource returned nil without an error")
			}
			return lib, nil
		},
		pipeline: ctx.newPipeline,
		free:     func(lib mtlLibrary) { lib.Release() },
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
func (ctx *metalContext) newPipeline(lib mtlLibrary, name string) (pipeline, error) {
	fn := objc.Call[mtlFunction](lib, objc.Sel("newFunctionWithName:"), name)
	if fn.IsNil() {
		return pipeline{}, fmt.Errorf("metal: the library has no function %s", name)
	}
	defer fn.Release()
	var nsErr nsError
	ps := objc.Call[mtlPipelineState](ctx.device, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(&nsErr))
	if ps.IsNil() {
		err := nsErrorOf(nsErr)
		if err == nil {
			err = errors.New("newComputePipelineStateWithFunction returned nil without an error")
		}
		return pipeline{}, fmt.Errorf("metal: pipeline %s: %v", name, err)
	}
	if w := objc.Call[uint](ps, objc.Sel("threadExecutionWidth")); w != simdWidth {
		ps.Release()
		return pipeline{}, fmt.Errorf("metal: pipeline %s runs %d-wide simdgroups; the kernels need %d", name, w, simdWidth)
	}
	maxThreads := int(objc.Call[uint](ps, objc.Sel("maxTotalThreadsPerThreadgroup")))
	if need := shaders.ThreadgroupSize(name); maxThreads < need {
		ps.Release()
		return pipeline{}, fmt.Errorf("metal: pipeline %s allows %d threads per threadgroup; it is dispatched with %d", name, maxThreads, need)
	}
	return pipeline{state: ps, maxThreads: maxThreads, width: simdWidth}, nil
}

// release is for a context that failed to build (a built one lives as long as the process;
// buildUnits released the pipelines of a build that failed, and no pipeline is made before).
func (ctx *metalContext) release() {
	objc.WithAutoreleasePool(func() { ctx.device.Release() })
}

// metalGPU is one Backend's queue and open pass over the shared context.
type metalGPU struct {
	ctx   *metalContext
	queue mtlCommandQueue
	open  bool // a pass is being encoded
	cmd   mtlCommandBuffer
	enc   mtlComputeEncoder
}

func newMetalGPU() (g *metalGPU, err error) {
	ctx, err := sharedContext()
	if err != nil {
		return nil, err
	}
	defer recoverAsError(&err)
	g = &metalGPU{ctx: ctx}
	objc.WithAutoreleasePool(func() { g.queue = objc.Call[mtlCommandQueue](ctx.device, objc.Sel("newCommandQueue")) })
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
	var buf mtlBuffer
	var contents unsafe.Pointer
	objc.WithAutoreleasePool(func() {
		buf = objc.Call[mtlBuffer](g.ctx.device, objc.Sel("newBufferWithLength:options:"), uint(n), resourceStorageModeShared)
		if !buf.IsNil() {
			contents = objc.Call[unsafe.Pointer](buf, objc.Sel("contents"))
		}
	})
	if buf.IsNil() {
		return nil, nil, fmt.Errorf("newBufferWithLength(%d) returned nil", n)
	}
	return buf, unsafe.Slice((*byte)(contents), n), nil
}

// wrap makes a no-copy buffer over mem: page-aligned, rounded up to whole pages (mmap maps
// whole pages, so the rounded length is still mapped memory). The deallocator is a real
// nil: the residency owns the memory and unmaps it only after the buffer is released.
func (g *metalGPU) wrap(mem []byte, page int) (devBuffer, error) {
	n := (len(mem) + page - 1) / page * page
	if n > g.ctx.maxBuffer {
		return nil, fmt.Errorf("region of %d bytes exceeds the device's maximum buffer length %d", n, g.ctx.maxBuffer)
	}
	var buf mtlBuffer
	objc.WithAutoreleasePool(func() {
		buf = objc.Call[mtlBuffer](g.ctx.device, objc.Sel("newBufferWithBytesNoCopy:length:options:deallocator:"), unsafe.Pointer(&mem[0]), uint(n), resourceStorageModeShared, unsafe.Pointer(nil))
	})
	if buf.IsNil() {
		return nil, fmt.Errorf("newBufferWithBytesNoCopy of %d bytes returned nil", n)
	}
	return buf, nil
}

func (g *metalGPU) release(b devBuffer) {
	if buf, ok := b.(mtlBuffer); ok && !buf.IsNil() {
		objc.WithAutoreleasePool(func() { buf.Release() })
	}
}

// begin opens a pass: a command buffer and its compute encoder (both autoreleased), retained
// until commit. The encoder's default (serial) dispatch type runs each dispatch after the
// previous one.
func (g *metalGPU) begin() {
	g.cmd = objc.Call[mtlCommandBuffer](g.queue, objc.Sel("commandBuffer"))
	if g.cmd.IsNil() {
		panic("metal: commandBuffer returned nil")
	}
	g.cmd.Retain()
	g.enc = objc.Call[mtlComputeEncoder](g.cmd, objc.Sel("computeCommandEncoder"))
	if g.enc.IsNil() {
		g.cmd.Release()
		panic("metal: computeCommandEncoder returned nil")
	}
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
			objc.Call[objc.Void](g.enc, objc.Sel("setBuffer:offset:atIndex:"), b.Handle.(mtlBuffer), uint(b.Offset), uint(i))
		}
		objc.Call[objc.Void](g.enc, objc.Sel("setBytes:length:atIndex:"), unsafe.Pointer(&d.Params[0]), uint(len(d.Params)), uint(len(d.Buffers)))
		objc.Call[objc.Void](g.enc, objc.Sel("dispatchThreadgroups:threadsPerThreadgroup:"), size(d.Groups), size(d.Threads))
	})
}

func size(v [3]int) mtlSize {
	return mtlSize{Width: uint64(v[0]), Height: uint64(v[1]), Depth: uint64(v[2])}
}

// commit ends the pass, runs it, waits, and returns its GPU time.
func (g *metalGPU) commit() (time.Duration, error) {
	if !g.open {
		return 0, nil
	}
	var d time.Duration
	var err error
	objc.WithAutoreleasePool(func() {
		objc.Call[objc.Void](g.enc, objc.Sel("endEncoding"))
		objc.Call[objc.Void](g.cmd, objc.Sel("commit"))
		objc.Call[objc.Void](g.cmd, objc.Sel("waitUntilCompleted"))
		if objc.Call[uint](g.cmd, objc.Sel("status")) == commandBufferStatusError {
			if err = nsErrorOf(objc.Call[nsError](g.cmd, objc.Sel("error"))); err == nil {
				err = errors.New("command buffer status: error")
			}
		}
		end, start := objc.Call[float64](g.cmd, objc.Sel("GPUEndTime")), objc.Call[float64](g.cmd, objc.Sel("GPUStartTime"))
		d = time.Duration((end - start) * float64(time.Second))
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
		g.queue = mtlCommandQueue{}
	}
}
