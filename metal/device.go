package metal

// device.go: what the platform files share about the GPU — the error that says Metal
// cannot run here, what the device is, and the pass that proves a backend works.
//
// Invariant: Available is true only after a real pass on a real backend gave the exact
// numbers it must (verify). Mutation that would silently break it: answering from the
// device alone — a Mac whose library fails to compile would offer Metal and fail on Apply.

import (
	"errors"
	"fmt"
	"time"

	"github.com/turbospark/inspector/engine/backend"
)

// ErrUnsupported wraps the reason this machine cannot run the Metal backend at all: not
// macOS, macOS before 14, no Apple-silicon (Apple7-family) GPU. Other errors from New and
// Check are failures of a machine that should run it.
var ErrUnsupported = errors.New("metal is not supported here")

// DeviceInfo describes the process's Metal device.
type DeviceInfo struct {
	Name          string        // "Apple M3 Max"
	Family        string        // the newest Apple GPU family it supports ("Apple9")
	OS            string        // "macOS 14.5"
	UnifiedMemory bool          // host and GPU share memory (no-copy weights are free)
	MaxBuffer     int64         // the largest buffer, bytes
	WorkingSet    int64         // recommendedMaxWorkingSetSize, bytes
	CompileTime   time.Duration // compiling the kernel library and its pipelines
	Pipelines     int
	// Fallbacks are the optional kernels (shaders.Optional: the flash attentions) this GPU could
	// not make a pipeline for, each with why; their ops run the kernel they fall back to.
	Fallbacks []string
	// FamilyErrors are the kernel families (or single kernels with a fallback) that did not
	// build, each with Apple's error and what runs instead.
	FamilyErrors []string
	// PipelineInfo is each pipeline's limits as the device reports them.
	PipelineInfo []PipelineInfo
}

// PipelineInfo is one compute pipeline's limits.
type PipelineInfo struct {
	Name           string
	MaxThreads     int // maxTotalThreadsPerThreadgroup
	ExecutionWidth int // threadExecutionWidth: the simdgroup width
}

// verify runs one small pass whose result is exact in float32 and checks it, so a backend
// that builds but computes nothing (or garbage) is not called available.
func verify(b backend.Backend) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("metal: the first pass panicked: %v", r)
		}
	}()
	const n = 100
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(1000*i+7)
	}
	bx, err := b.Alloc(n)
	if err != nil {
		return err
	}
	defer b.Free(bx)
	by, err := b.Alloc(n)
	if err != nil {
		return err
	}
	defer b.Free(by)
	b.Upload(backend.View{Buf: bx}, x)
	b.Upload(backend.View{Buf: by}, y)
	b.Add(backend.View{Buf: bx}, backend.View{Buf: by}, n)
	if _, err := b.Commit(); err != nil {
		return fmt.Errorf("metal: the first pass failed: %w", err)
	}
	got := make([]float32, n)
	b.Download(got, backend.View{Buf: bx})
	for i, g := range got {
		if want := x[i] + y[i]; g != want {
			return fmt.Errorf("metal: the first pass computed %g at %d, want %g: the GPU does not run the kernels", g, i, want)
		}
	}
	return nil
}
