package engine

// memlimit.go: the one owner of "how much this process may hold". Every limit in force is
// listed — the machine's memory, the cgroup's memory.max, ulimit -v (RLIMIT_AS) less what the
// process maps already and what its threads and heap will still map, and --max-memory — each
// less what the other open sessions hold or have yet to take; a run is refused before anything
// is allocated when it does not fit under any one of them, with the limit that binds named and
// what it would need, and the Go runtime's soft memory limit (debug.SetMemoryLimit) is set
// from the same numbers so the garbage collector works harder near the limit instead of the
// heap growing past it.
//
// Invariant: under RLIMIT_AS what is already mapped is the process's VmSize, less only the Go
// heap's free pages (which the heap reuses before it maps more), and a run needs its whole
// weights' mapping there (every byte of it counts, touched or not), so a run that passes the
// check gets every mapping it asks for. Mutation that would silently break it: subtracting
// nothing for the threads yet to come — each new thread of a cgo binary maps an 8 MiB stack
// and a 64 MiB malloc arena as it starts, the arenas take the room the check promised the Go
// heap, and the run dies in "fatal error: out of memory" part way (TestBudgetAddressSpace).

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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

// heldMemory is what the sessions open in this process hold and may still take.
type heldMemory struct {
	Total   int64 // their estimates
	ToCome  int64 // what they have yet to allocate: scratch, and the probes of blocks not yet run
	Outside int64 // of Total, what lies outside the Go heap (weights, the CPU's widened weights)
	Weights int64 // of Outside, the weights (mapped by the time a session is open)
	Largest int64 // the largest heap block any of them makes
}

type limitKind int

const (
	limitRAM limitKind = iota
	limitCgroup
	limitAS
	limitFlag
)

// memLimit is one limit on what a new run may hold.
type memLimit struct {
	kind  limitKind
	value int64  // the limit's own value
	free  int64  // what a new run may hold under it now
	why   string // the limit, named, and how free was found
	goMax int64  // what the Go runtime may map under it (its soft memory limit)
	// RLIMIT_AS: the largest heap block the room kept for the heap already allows for.
	largest int64
}

// extraThreads is how many threads a process has beyond GOMAXPROCS at most, measured: the
// CLI's run peaks at GOMAXPROCS + 7 (sysmon, the template thread, the signal and timer threads,
// a pread or a cgo call blocked in the kernel), the window adds Fyne's and GL's.
const extraThreads = 8

// heapArena is the address space the Go heap reserves at a time (heapArenaBytes on 64-bit
// Linux): the heap's next growth maps this much, whatever it was for.
const heapArena = 64 << 20

// heapRoom is the address space the Go heap wants beyond what it holds for a run whose largest
// block is largest: its next arena, and twice that block (the free pages a collection leaves
// are scattered between kept ones, and a block wants contiguous pages: measured, a 5,120-patch
// page of the 8B died asking for its 24 MiB output with 36 MiB free in pieces).
func heapRoom(largest int64) int64 { return heapArena + 2*largest }

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

// limitsOf lists the limits in force for a new run, given what the process holds (h: the
// open sessions) and maxMemory (Settings.MaxMemory, 0: none).
func limitsOf(p procMemory, g goMemory, maxMemory int64, h heldMemory) []memLimit {
	var out []memLimit
	others := ""
	if h.Total > 0 {
		others = fmt.Sprintf(", %s of it held by the other open runs", FormatBytes(h.Total))
	}
	add := func(kind limitKind, value int64, name string) {
		out = append(out, memLimit{kind: kind, value: value, free: value - h.Total, goMax: value - h.Outside,
			why: fmt.Sprintf("%s (%s%s)", name, FormatBytes(value), others)})
	}
	if p.RAM > 0 {
		add(limitRAM, p.RAM, "this machine's memory")
	}
	if p.Cgroup > 0 {
		add(limitCgroup, p.Cgroup, "the cgroup's memory limit "+p.CgroupFile)
	}
	if maxMemory > 0 {
		add(limitFlag, maxMemory, "--max-memory")
	}
	if p.AS > 0 {
		// Mapped counts the Go heap's free pages too: the heap reuses them before it maps more.
		slack := p.threadSlack() + heapRoom(h.Largest)
		mapped := p.Mapped - g.Free - g.Released
		free := p.AS - mapped - slack - h.ToCome
		// The Go runtime may map what nothing else does, less the room its heap wants and the
		// mappings the open runs will still make (the CPU's widened weights: counted whole).
		goMax := p.AS - (p.Mapped - g.Total) - slack - (h.Outside - h.Weights)
		out = append(out, memLimit{kind: limitAS, value: p.AS, free: free, goMax: goMax, largest: h.Largest,
			why: fmt.Sprintf("ulimit -v (RLIMIT_AS) of %s: the process maps %s already and keeps %s for its threads and heap%s, which leaves %s",
				FormatBytes(p.AS), FormatBytes(mapped), FormatBytes(slack), toCome(h.ToCome), FormatBytes(max(free, 0)))})
	}
	return out
}

func toCome(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %s for what the other open runs will still take", FormatBytes(n))
}

// need is what a run estimated at est takes under l: its total; under RLIMIT_AS, less what it
// holds already (mapped now, counted in free), with the whole of the weights' mapping (every
// mapped byte counts there, touched or not) and the room its heap wants for its largest
// blocks beyond what the other runs' allow for.
func (l memLimit) need(est MemoryEstimate) int64 {
	if l.kind != limitAS {
		return est.Total()
	}
	return est.Total() - est.Held - est.Weights + max(est.Mapping, est.Weights) + 2*max(est.Largest-l.largest, 0)
}

// needs says what the limit would have to be for need bytes to fit.
func (l memLimit) needs(need int64) string {
	short := need - l.free
	switch l.kind {
	case limitAS:
		kib := (l.value + short + 1023) >> 10
		return fmt.Sprintf("it would need ulimit -v %d (%s) or more", kib, FormatBytes(kib<<10))
	case limitFlag:
		return fmt.Sprintf("it would need --max-memory %s or more", FormatBytes(l.value+short))
	case limitCgroup:
		return fmt.Sprintf("it would need a cgroup memory limit of %s or more", FormatBytes(l.value+short))
	}
	return fmt.Sprintf("it would need %s more memory", FormatBytes(short))
}

// memoryLimits are the limits in force now for a new run (excluding self's own holdings
// when it is an open session asking again).
func memoryLimits(maxMemory int64, self *Session) []memLimit {
	p := readProcess()
	if p.AS > 0 {
		// What the heap holds is what is live, not what the last collection left: the decoded
		// image and the previous run's buffers are garbage the heap will reuse.
		runtime.GC()
		p = readProcess()
	}
	return limitsOf(p, readGoMemory(), maxMemory, heldBy(self))
}

// tightest is the limit with the least room (nil when none is known).
func tightest(ls []memLimit) *memLimit {
	var best *memLimit
	for i := range ls {
		if best == nil || ls[i].free < best.free {
			best = &ls[i]
		}
	}
	return best
}

// MemoryBudget is how many bytes a new run may hold in this process now, and why: the
// tightest of the machine's memory, the cgroup's memory limit, ulimit -v (RLIMIT_AS) less
// what is mapped already and what the threads and heap will map, and maxMemory (0: none),
// each less what the open sessions hold. 0 and "" when no limit is known.
func MemoryBudget(maxMemory int64) (bytes int64, why string) {
	l := tightest(memoryLimits(maxMemory, nil))
	if l == nil {
		return 0, ""
	}
	return max(l.free, 0), l.why
}

// ---- the open sessions ----

var open struct {
	sync.Mutex
	sessions map[*Session]struct{}
}

// progress counts the blocks of a session's current run (Restart starts it again).
type progress struct{ blocks atomic.Int64 }

func register(s *Session) {
	open.Lock()
	if open.sessions == nil {
		open.sessions = map[*Session]struct{}{}
	}
	open.sessions[s] = struct{}{}
	open.Unlock()
	applyGoLimit()
}

func unregister(s *Session) {
	open.Lock()
	_, was := open.sessions[s]
	delete(open.sessions, s)
	open.Unlock()
	if was {
		applyGoLimit()
	}
}

// heldBy sums what the open sessions but except hold and may still take.
func heldBy(except *Session) heldMemory {
	open.Lock()
	defer open.Unlock()
	var h heldMemory
	for s := range open.sessions {
		if s == except {
			continue
		}
		m := s.Memory
		h.Total += m.Total()
		h.Outside += m.Outside
		h.Weights += m.Weights
		h.Largest = max(h.Largest, m.Largest)
		depth := int64(max(s.Checkpoint.Config.Depth, 1))
		done := min(s.progress.blocks.Load(), depth)
		h.ToCome += m.Scratch + m.Probes*(depth-done)/depth
	}
	return h
}

// flagLimits is the smallest max memory setting of the open sessions (0: none).
func flagLimits() int64 {
	open.Lock()
	defer open.Unlock()
	var n int64
	for s := range open.sessions {
		if m := s.Settings.MaxMemory; m > 0 && (n == 0 || m < n) {
			n = m
		}
	}
	return n
}

// initialGoLimit is the soft memory limit the process started with (GOMEMLIMIT, else none):
// the runtime's is never set above it.
var initialGoLimit = debug.SetMemoryLimit(-1)

// minGoLimit keeps the collector from running without end where the limits leave the heap
// almost nothing: below it the run is refused anyway.
const minGoLimit = 64 << 20

// applyGoLimit sets the Go runtime's soft memory limit to what the limits in force leave the
// Go heap (RLIMIT_AS: the address space not mapped by anything else, less the threads' and the
// heap's slack; the others: the limit less the open sessions' weights, which lie outside the
// heap). It returns the limit set.
func applyGoLimit() int64 {
	return applyGoLimitFrom(limitsOf(readProcess(), readGoMemory(), flagLimits(), heldBy(nil)))
}

// readProcess is readProcMemory (the OS's view) with the Go runtime's thread count.
func readProcess() procMemory {
	p := readProcMemory()
	p.GoThreads, _ = runtime.ThreadCreateProfile(nil) // every M the runtime made; they never exit
	return p
}

func applyGoLimitFrom(ls []memLimit) int64 {
	limit := initialGoLimit
	for _, l := range ls {
		limit = min(limit, max(l.goMax, minGoLimit))
	}
	if limit <= 0 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit
}
