//go:build darwin

package metal

// new_darwin.go: New, Check, Available and Device on macOS.
//
// Invariant: New returns a backend only when the library compiled and every kernel has a
// pipeline; Check (and so Available) succeeds only after a pass on a real backend gave
// exact numbers; any failure is an error naming what failed, never a panic. Mutation that
// would silently break it: ignoring a pipeline error — the first op of that kernel would
// panic mid-run.

import (
	"os"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// New returns a Metal backend on the system's default GPU (Apple silicon, macOS 14+): a
// command queue of its own over the process's device and pipelines, made once. The result
// is a *Backend; its owner closes it (engine.Engine does).
func New() (backend.Backend, error) {
	g, err := newMetalGPU()
	if err != nil {
		return nil, err
	}
	return newBackend(g, os.Getpagesize()), nil
}

// NewProfiled returns a Metal backend that runs each dispatch in a command buffer of its own
// and logs it with its GPU time and the model's estimate on g (inspector gpumodel).
func NewProfiled(g shaders.GPU) (*Backend, *ModelLog, error) {
	gpu, err := newMetalGPU()
	if err != nil {
		return nil, nil, err
	}
	b := newBackend(gpu, os.Getpagesize())
	return b, b.profile(g), nil
}

// checked is a first pass that gave the right numbers: kept once made, retried while not
// (a transient failure is not the answer for the life of the process).
var checked = onceOK[struct{}]{make: func() (struct{}, error) {
	b, err := New()
	if err != nil {
		return struct{}{}, err
	}
	defer b.Close()
	return struct{}{}, verify(b)
}}

// Check says why the Metal backend cannot run here (errors.Is(err, ErrUnsupported) when
// this machine cannot run it at all), or nil once a first pass gave the right numbers. A
// success is kept for the process; a failure is tried again by the next Check.
func Check() error {
	_, err := checked.get()
	return err
}

// Probe is the start-up probe's check of the kernels (probe.go): a first pass that gave the
// right numbers (Check), then every pipeline the device made dispatched on tiny shapes against
// float64 references. Run it in a child process: a crash in any first dispatch is the child's.
func Probe() (PipelineProbe, error) {
	if err := Check(); err != nil {
		return PipelineProbe{}, err
	}
	return ProbePipelines(New)
}

// Possible says whether this build has Metal code to touch: on macOS, yes (whether it runs
// is Check's answer, which a crash in the bridge may never give: callers probe in a child
// process first).
func Possible() bool { return true }

// Available says whether Check succeeded.
func Available() bool { return Check() == nil }

// Device describes the GPU once the library compiled.
func Device() (DeviceInfo, error) {
	ctx, err := sharedContext()
	if err != nil {
		return DeviceInfo{}, err
	}
	return ctx.info, nil
}
