package cpu

// tasks.go: how ops cut their work. Each op splits its output into tasks decided by the
// shapes alone and runs them with internal/par.
//
// Invariant: a task index names a fixed piece of the output; which worker picks it up
// (dynamically) never changes what is computed. The worker id is only a key into
// per-worker scratch. Mutation that would silently break it: passing the worker id (or the
// thread count) into the arithmetic, e.g. sizing a reduction's chunks by it.

// chunks is the number of pieces of size at most size that cover n.
func chunks(n, size int) int { return (n + size - 1) / size }
