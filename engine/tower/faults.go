package tower

// faults.go: a memory fault under a run (a mapped shard truncated or rewritten while it is
// read) becomes an error naming the file, never a crash.
//
// Invariant: a memory fault becomes an error only when a mapped shard is at its address, or,
// failing that, when a mapped shard has shrunk (the runtime gives no address below the first
// page, qemu-user none at all); any other panic goes on.
// Mutation that would silently break it: recovering every panic: a bug would be reported as a
// changed file, and the run would go on from a half-written pass.

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// faultsAsErrors makes a memory fault in what follows — a mapped shard truncated or
// rewritten under the run, read by this goroutine or by the backend's workers — a panic,
// and returns the deferred func that turns that panic into an error naming the file. Any
// other panic goes on (it is a bug, not bad input), and so does a memory fault when no
// mapped file is at its address or has shrunk. Use: defer e.faultsAsErrors()(&err).
func (e *Engine) faultsAsErrors() func(*error) {
	old := debug.SetPanicOnFault(true)
	return func(err *error) {
		debug.SetPanicOnFault(old)
		p := recover()
		if p == nil {
			return
		}
		re, isRuntime := p.(runtime.Error)
		if !isRuntime || !strings.Contains(re.Error(), "invalid memory address") {
			panic(p)
		}
		var addr uintptr
		file := ""
		if fault, ok := p.(interface{ Addr() uintptr }); ok {
			addr = fault.Addr()
			file = e.Res.FileAt(addr)
		}
		if file == "" {
			// The runtime gives no address for a fault it reads as below the first page
			// (qemu-user passes none): the file that shrank under its mapping is the cause.
			file = e.Res.Shrunk()
		}
		if file == "" {
			panic(p)
		}
		at := ""
		if addr != 0 {
			at = fmt.Sprintf(" at %#x", addr)
		}
		*err = fmt.Errorf("%s: the file changed while the run had it mapped (truncated or rewritten: a memory fault%s); open the checkpoint again, or use pread residency, which reads instead of mapping", file, at)
	}
}
