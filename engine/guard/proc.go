package guard

// proc.go: what the operating system and the Go runtime say about this process's memory (read
// by physmem_*.go and runtime/metrics), and what the threads yet to come will map.
//
// Invariant: the threads to come are counted at what each maps as it starts — a stack, and in
// a cgo binary on glibc a malloc arena of its own unless the arenas were capped — up to
// GOMAXPROCS + extraThreads of the Go runtime's. Mutation that would silently break it:
// counting no arena for them — each new thread of a cgo binary maps a 64 MiB arena, the arenas
// take the room the check promised the Go heap, and the run dies in "fatal error: out of
// memory" part way (TestThreadSlack).

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
)

// procMemory is what the operating system says about this process (physmem_*.go).
type procMemory struct {
	RAM        int64  // the machine's memory (0: unknown)
	Cgroup     int64  // the tightest memory limit of the process's cgroups (0: none)
	CgroupFile string // the file that sets it
	AS         int64  // RLIMIT_AS, ulimit -v (0: none)
	Mapped     int64  // address space mapped now (VmSize)
	Threads    int    // threads now
	GoThreads  int    // of them, the Go runtime's (its Ms; not C's: GL's, llvmpipe's)
	// What one more thread maps: its stack, and a malloc arena where glibc gives it one.
	ThreadStack, ThreadArena int64
}

// goMemory is what the Go runtime has mapped (runtime/metrics).
type goMemory struct {
	Total    int64 // every byte the runtime mapped read-write (/memory/classes/total)
	Released int64 // heap pages returned to the OS, still mapped (reused before the heap grows)
	Free     int64 // heap pages free and resident (reused likewise)
}

func readGoMemory() goMemory {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	return goMemory{Total: v(0), Released: v(1), Free: v(2)}
}

// extraThreads is how many threads a process has beyond GOMAXPROCS at most, measured: the
// CLI's run peaks at GOMAXPROCS + 7 (sysmon, the template thread, the signal and timer threads,
// a pread or a cgo call blocked in the kernel), the window adds Fyne's and GL's.
const extraThreads = 8

// threadSlack is what the threads yet to come will map.
func (p procMemory) threadSlack() int64 {
	n := max(0, runtime.GOMAXPROCS(0)+extraThreads-p.GoThreads)
	arenas := min(n, max(0, 8*runtime.NumCPU()-p.Threads)) // glibc stops at 8 arenas a core
	if mallocArenas.Load() > 0 {
		arenas = 0 // capped: the arenas past the main one were made by the runtime's first threads
	}
	return int64(n)*p.ThreadStack + int64(arenas)*p.ThreadArena
}

var mallocArenas atomic.Int64

// SetMallocArenas says the process capped glibc's malloc arenas at n (mallopt M_ARENA_MAX,
// before its first thread; 0: not capped): the threads to come then map no arena of their own.
func SetMallocArenas(n int) { mallocArenas.Store(int64(n)) }
