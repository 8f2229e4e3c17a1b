package main

// backends.go: Metal's registration in the backend registry (engine/backend/registry.go):
// available exactly where its start-up probe child survived it and metal.Check passed here
// (metalprobe.go), expected on macOS, made by metal.New (the tests' stand-in GPU under the
// inspectortest tag). The registry decides auto and the CPU fallback for `run --backend` and
// the window alike.
//
// Invariant: Metal is offered (and is the default) only where a probe child survived it and
// metal.Check passed here: a device, the compiled library and a first pass with exact numbers
// (metalprobe.go). Mutation that would silently break it: registering Available as nil
// (offering Metal by name everywhere) — Linux would list it and fail on Apply, and a Mac whose
// library does not compile would start on a backend that cannot run.

import (
	"runtime"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/metal"
)

func init() {
	backend.Register(backend.Registration{
		Name: metal.Name, Title: metal.Title, Preference: metal.Preference,
		Available: metalOK, Expected: metalExpected, Note: metalFallbacksNote, Retry: retryMetal,
		Make: func(threads int) (backend.Backend, error) {
			if standinGPU() { // tests: the CPU engine stands in for the GPU
				return standinMetal(threads), nil
			}
			return metal.New()
		},
	})
}

// metalExpected says whether a user here would expect Metal, so its absence is worth a
// note: on macOS (and under the tests' stand-in GPU).
func metalExpected() bool { return runtime.GOOS == "darwin" || standinGPU() }

// openBackend makes the backend s.Backend asks for (the registry resolves auto and falls
// back) and sets s.Backend to the one made.
func openBackend(s *engine.Settings) (backend.Backend, string, error) {
	be, name, note, err := backend.Open(s.Backend, s.Threads)
	if name != "" {
		s.Backend = name
	}
	return be, note, err
}
