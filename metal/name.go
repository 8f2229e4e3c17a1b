package metal

// name.go: Metal's name in the backend registry (engine/backend/registry.go). Metal registers
// beside its start-up probe, not here: whether it is available is a probe child's verdict
// (the probe imports this package, so this package cannot ask it).
//
// Invariant: Name is Metal's one spelling; nothing outside this folder, the registry and the
// registration writes it. Mutation that would silently break it: a second spelling elsewhere
// — a --backend value in it would not name the registered backend.

// Name is the Metal backend's name as settings spell it.
const Name = "metal"

// Title is Metal's name in sentences.
const Title = "Metal"

// Preference is Metal's rank in auto's choice: above the CPU (0).
const Preference = 1
