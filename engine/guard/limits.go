// Package guard is the engine's memory and sanity room: the limits a run must fit under (the
// machine's memory, the cgroup's, ulimit -v, --max-memory, less what the open sessions hold:
// limits.go, proc.go, physmem_*.go, cgroup.go), what a run will hold (estimate.go), the checks
// made before allocating (check.go, image.go), and where a value first stopped being finite
// (nonfinite.go). It imports no engine room: callers pass plain values (guard.Shape,
// guard.Holding); the engine root aliases its names (engine/face.go).
package guard

// limits.go: the one owner of "how much this process may hold". Every limit in force is
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
	"sync"
	"sync/atomic"
)

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

// Limit is one limit on what a new run may hold.
type Limit struct {
	kind  limitKind
	value int64  // the limit's own value
	Free  int64  // what a new run may hold under it now
	Why   string // the limit, named, and how Free was found
	goMax int64  // what the Go runtime may map under it (its soft memory limit)
	// RLIMIT_AS: the largest heap block the room kept for the heap already allows for.
	largest int64
}

// heapArena is the address space the Go heap reserves at a time (heapArenaBytes on 64-bit
// Linux): the heap's next growth maps this much, whatever it was for.
const heapArena = 64 << 20

// heapRoom is the address space the Go heap wants beyond what it holds for a run whose largest
// block is largest: its next arena, and twice that block (the free pages a collection leaves
// are scattered between kept ones, and a block wants contiguous pages: measured, a 5,120-patch
// page of the 8B died asking for its 24 MiB output with 36 MiB free in pieces).
func heapRoom(largest int64) int64 { return heapArena + 2*largest }

// limitsOf lists the limits in force for a new run, given what the process holds (h: the
// open sessions) and maxMemory (Settings.MaxMemory, 0: none).
func limitsOf(p procMemory, g goMemory, maxMemory int64, h heldMemory) []Limit {
	var out []Limit
	others := ""
	if h.Total > 0 {
		others = fmt.Sprintf(", %s of it held by the other open runs", FormatBytes(h.Total))
	}
	add := func(kind limitKind, value int64, name string) {
		out = append(out, Limit{kind: kind, value: value, Free: value - h.Total, goMax: value - h.Outside,
			Why: fmt.Sprintf("%s (%s%s)", name, FormatBytes(value), others)})
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
		out = append(out, Limit{kind: limitAS, value: p.AS, Free: free, goMax: goMax, largest: h.Largest,
			Why: fmt.Sprintf("ulimit -v (RLIMIT_AS) of %s: the process maps %s already and keeps %s for its threads and heap%s, which leaves %s",
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

// Need is what a run estimated at est takes under l: its total; under RLIMIT_AS, less what it
// holds already (mapped now, counted in Free), with the whole of the weights' mapping (every
// mapped byte counts there, touched or not) and the room its heap wants for its largest
// blocks beyond what the other runs' allow for.
func (l Limit) Need(est MemoryEstimate) int64 {
	if l.kind != limitAS {
		return est.Total()
	}
	return est.Total() - est.Held - est.Weights + max(est.Mapping, est.Weights) + 2*max(est.Largest-l.largest, 0)
}

// Needs says what the limit would have to be for need bytes to fit.
func (l Limit) Needs(need int64) string {
	short := need - l.Free
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

// Limits are the limits in force now for a new run, each less what the open holdings
// (Register) hold; maxMemory is the run's own max memory setting (0: none).
func Limits(maxMemory int64) []Limit {
	p := readProcess()
	if p.AS > 0 {
		// What the heap holds is what is live, not what the last collection left: the decoded
		// image and the previous run's buffers are garbage the heap will reuse.
		runtime.GC()
		p = readProcess()
	}
	return limitsOf(p, readGoMemory(), maxMemory, held())
}

// tightest is the limit with the least room (nil when none is known).
func tightest(ls []Limit) *Limit {
	var best *Limit
	for i := range ls {
		if best == nil || ls[i].Free < best.Free {
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
	l := tightest(Limits(maxMemory))
	if l == nil {
		return 0, ""
	}
	return max(l.Free, 0), l.Why
}

// ---- the open sessions ----

// Holding is what an open session holds, as the limits see it while it is open: its
// estimate, its tower's depth and the blocks its current run has done (what it has yet to keep
// shrinks as they run; the session counts them, from 0 at each restart), and its max memory
// setting (0: none), which binds every other run while it is open.
type Holding struct {
	Memory    MemoryEstimate
	Depth     int
	Done      *atomic.Int64
	MaxMemory int64
}

var open struct {
	sync.Mutex
	holdings map[any]Holding
}

// Register counts h, the holding of the open session key, against every later run until
// Unregister(key); the Go runtime's soft memory limit follows.
func Register(key any, h Holding) {
	open.Lock()
	if open.holdings == nil {
		open.holdings = map[any]Holding{}
	}
	open.holdings[key] = h
	open.Unlock()
	applyGoLimit()
}

// Unregister stops counting key's holding (a key not registered: nothing happens).
func Unregister(key any) {
	open.Lock()
	_, was := open.holdings[key]
	delete(open.holdings, key)
	open.Unlock()
	if was {
		applyGoLimit()
	}
}

// held sums what the open sessions hold and may still take.
func held() heldMemory {
	open.Lock()
	defer open.Unlock()
	var h heldMemory
	for _, s := range open.holdings {
		m := s.Memory
		h.Total += m.Total()
		h.Outside += m.Outside
		h.Weights += m.Weights
		h.Largest = max(h.Largest, m.Largest)
		depth := int64(max(s.Depth, 1))
		done := min(s.Done.Load(), depth)
		h.ToCome += m.Scratch + m.Probes*(depth-done)/depth
	}
	return h
}

// flagLimits is the smallest max memory setting of the open sessions (0: none).
func flagLimits() int64 {
	open.Lock()
	defer open.Unlock()
	var n int64
	for _, s := range open.holdings {
		if m := s.MaxMemory; m > 0 && (n == 0 || m < n) {
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
	return ApplyGoLimit(limitsOf(readProcess(), readGoMemory(), flagLimits(), held()))
}

// readProcess is readProcMemory (the OS's view) with the Go runtime's thread count.
func readProcess() procMemory {
	p := readProcMemory()
	p.GoThreads, _ = runtime.ThreadCreateProfile(nil) // every M the runtime made; they never exit
	return p
}

// ApplyGoLimit sets the Go runtime's soft memory limit to the least that ls leave the Go
// heap (never above the limit the process started with, never below minGoLimit), and returns it.
func ApplyGoLimit(ls []Limit) int64 {
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
