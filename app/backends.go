package main

// backends.go: the one place that knows which compute backends exist on this machine,
// which one runs by default, and how to make them; `run --backend` and the window use it.
//
// Invariant: Metal is offered (and is the default) only where a probe child survived it and
// metal.Check passed here: a device, the compiled library and a first pass with exact numbers
// (metalprobe.go). Mutation that would silently break it: offering Metal by name everywhere
// — Linux would list it and fail on Apply, and a Mac whose library does not compile would
// start on a backend that cannot run.

import (
	"fmt"
	"runtime"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/metal"
)

// backendAuto picks Metal where it runs, else the CPU.
const backendAuto = "auto"

// newBackend makes a compute backend by name.
func newBackend(name string, threads int) (backend.Backend, error) {
	switch name {
	case engine.BackendCPU:
		return cpu.New(threads), nil
	case engine.BackendMetal:
		if err := metalOK(); err != nil {
			return nil, err
		}
		if standinGPU() { // tests: the CPU engine stands in for the GPU
			return standinMetal(threads), nil
		}
		return metal.New()
	}
	return nil, fmt.Errorf("backend %q: want cpu or metal", name)
}

// resolveBackend turns a --backend value into a backend to make, and a note when auto did
// not get Metal on a Mac (off macOS the CPU is simply the engine).
func resolveBackend(want string) (name, note string, err error) {
	switch want {
	case engine.BackendCPU:
		return engine.BackendCPU, "", nil
	case engine.BackendMetal:
		if err := metalOK(); err != nil {
			return "", "", err
		}
		return engine.BackendMetal, metalFallbacksNote(), nil
	case backendAuto, "":
		err := metalOK()
		if err == nil {
			return engine.BackendMetal, metalFallbacksNote(), nil
		}
		if metalExpected() {
			return engine.BackendCPU, "running on the CPU: " + err.Error(), nil
		}
		return engine.BackendCPU, "", nil
	}
	return "", "", fmt.Errorf("backend %q: want auto, cpu or metal", want)
}

// openBackend makes the backend s.Backend asks for and sets s.Backend to the one made;
// auto falls back to the CPU, with a note, when Metal passed its check but cannot be made
// now.
func openBackend(s *engine.Settings) (backend.Backend, string, error) {
	want := s.Backend
	name, note, err := resolveBackend(want)
	if err != nil {
		return nil, "", err
	}
	s.Backend = name
	be, err := newBackend(name, s.Threads)
	if err != nil && name != engine.BackendCPU && (want == backendAuto || want == "") {
		s.Backend = engine.BackendCPU
		return cpu.New(s.Threads), fmt.Sprintf("running on the CPU: %v", err), nil
	}
	return be, note, err
}

// metalExpected says whether a user here would expect Metal, so its absence is worth a
// note: on macOS (and under the tests' stand-in GPU).
func metalExpected() bool { return runtime.GOOS == "darwin" || standinGPU() }
