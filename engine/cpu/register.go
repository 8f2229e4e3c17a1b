package cpu

// register.go: the CPU backend in the backend registry (engine/backend/registry.go): always
// available, the least preferred, and the fallback every other backend falls back to.
//
// Invariant: Name is the CPU's one spelling; nothing outside this folder and the registry
// writes it. Mutation that would silently break it: a second spelling elsewhere ("CPU") —
// a saved setting or a --backend value in that spelling would not name a registered backend.

import "github.com/turbospark/inspector/engine/backend"

// Name is the CPU backend's name as settings spell it.
const Name = "cpu"

func init() {
	backend.Register(backend.Registration{
		Name: Name, Title: "the CPU", Preference: 0, Fallback: true,
		Make: func(threads int) (backend.Backend, error) { return New(threads), nil },
	})
}
