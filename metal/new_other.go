//go:build !darwin

package metal

// new_other.go: off macOS there is no Metal; New and Check say so plainly.
//
// Invariant: New never returns a usable backend here, and its error names the platform and
// wraps ErrUnsupported. Mutation that would silently break it: returning (nil, nil) — a
// caller that checks only the error would then run the engine on a nil backend and panic
// far from the cause.

import (
	"fmt"
	"runtime"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

func unsupported() error {
	return fmt.Errorf("%w: the Metal backend needs macOS on Apple silicon (this is %s/%s); use the CPU backend", ErrUnsupported, runtime.GOOS, runtime.GOARCH)
}

// New returns the Metal backend; off macOS it returns an error.
func New() (backend.Backend, error) { return nil, unsupported() }

// NewProfiled returns a profiling Metal backend; off macOS it returns an error.
func NewProfiled(shaders.GPU) (*Backend, *ModelLog, error) { return nil, nil, unsupported() }

// Check says why the Metal backend cannot run here.
func Check() error { return unsupported() }

// Probe is the start-up probe's check of the kernels; off macOS, an error.
func Probe() (PipelineProbe, error) { return PipelineProbe{}, unsupported() }

// Possible says whether this build has Metal code to touch at all: not off macOS.
func Possible() bool { return false }

// Available says whether New can succeed: never off macOS.
func Available() bool { return false }

// Device describes the GPU: off macOS, an error.
func Device() (DeviceInfo, error) { return DeviceInfo{}, unsupported() }
