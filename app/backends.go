package main

// backends.go: a command's backend, as the backend registry (engine/backend/registry.go)
// decides it: auto resolved, the CPU fallback taken once there; Metal registers beside its
// start-up probe (selftest/register.go).
//
// Invariant: s.Backend names the backend made, never "auto". Mutation that would silently
// break it: leaving s.Backend as asked — the report and Compare would print "auto" where a
// reader needs to know which engine ran.

import (
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
)

// openBackend makes the backend s.Backend asks for and sets s.Backend to the one made.
func openBackend(s *engine.Settings) (backend.Backend, string, error) {
	be, name, note, err := backend.Open(s.Backend, s.Threads)
	if name != "" {
		s.Backend = name
	}
	return be, note, err
}
