package selftest

// register.go: Metal's registration in the backend registry (engine/backend/registry.go):
// available exactly where its start-up probe child survived it and metal.Check passed here
// (probe.go), expected on macOS, made by metal.New (the tests' stand-in GPU under the
// inspectortest tag). It lives here, not in metal/, because the probe imports metal. The
// registry decides auto and the CPU fallback for `run --backend` and the window alike.
//
// Invariant: Metal is offered (and is the default) only where a probe child survived it and
// metal.Check passed here: a device, the compiled library and a first pass with exact numbers.
// Mutation that would silently break it: registering Available as nil (offering Metal by name
// everywhere) — Linux would list it and fail on Apply, and a Mac whose library does not
// compile would start on a backend that cannot run.

import (
	"runtime"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/metal"
)

func init() {
	backend.Register(backend.Registration{
		Name: metal.Name, Title: metal.Title, Preference: metal.Preference,
		Available: metalOK, Expected: MetalExpected, Note: metalFallbacksNote, Retry: retryMetal,
		Make: func(threads int) (backend.Backend, error) {
			if StandinGPU() { // tests: the CPU engine stands in for the GPU
				return standinMetal(threads), nil
			}
			return metal.New()
		},
	})
}

// MetalExpected says whether a user here would expect Metal, so its absence is worth a
// note: on macOS (and under the tests' stand-in GPU).
func MetalExpected() bool { return runtime.GOOS == "darwin" || StandinGPU() }

// MetalRuns says whether the real GPU runs here (not the tests' stand-in): the probe child
// survived it and metal.Check passed, so metal.Device and metal.New may be called.
func MetalRuns() bool { return metalOK() == nil && !StandinGPU() }
