// loopprof.go: where a run's threads wait, loop by loop (inspector bench --loops).
//
// Every op of the CPU backend runs as one or more parallel loops (Backend.parallel), and a loop
// ends when its slowest thread does: the threads that finished first wait. With the profile on,
// each loop records its wall and the sum of its tasks' own times, per call site; the threads'
// time the loop left unused is threads x wall - busy (threads: the backend's, so a loop of
// fewer tasks than threads counts the threads it left without one). The 16-core device showed
// with it that the AMX products' loops stood 22% idle and the split's 50% at 16 threads, which
// no op timer shows (an op's wall is all the work it did).
//
// Invariant: the profile only reads the clock around each task and each loop; the tasks, their
// order and their worker ids are the loop's own, so a profiled run computes the same bits.
// Mutation that would silently break it: timing a task from the loop's start, not its own:
// a thread's second task would count its wait for the first, and a loop would look busier
// than its threads could be (TestLoopProfileIdle).
package cpu

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LoopSite is what the loops started at one call site did, summed over the run.
type LoopSite struct {
	Site  string        `json:"site"` // file:line function of the Backend.parallel call
	Loops int           `json:"loops"`
	Tasks int           `json:"tasks"`
	Wall  time.Duration `json:"wall_ns"` // the loops' wall, start to the last task's end
	Busy  time.Duration `json:"busy_ns"` // the tasks' own time, summed over threads
	// Idle is the share of the threads' time over the loops' wall that no task used:
	// 1 - busy / (threads x wall).
	Idle float64 `json:"idle"`
}

// loopProfile gathers LoopSites by call site (file and line).
type loopProfile struct {
	mu    sync.Mutex
	sites map[string]*LoopSite
}

// ProfileLoops turns the loop profile on (from now, empty) or off.
func (b *Backend) ProfileLoops(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loops = nil
	if on {
		b.loops = &loopProfile{sites: map[string]*LoopSite{}}
	}
}

// LoopProfile returns the profile so far, the sites with the most wall first; nil when off.
func (b *Backend) LoopProfile() []LoopSite {
	b.mu.Lock()
	p := b.loops
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]LoopSite, 0, len(p.sites))
	for _, s := range p.sites {
		r := *s
		if r.Wall > 0 {
			r.Idle = 1 - float64(r.Busy)/(float64(b.threads)*float64(r.Wall))
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y LoopSite) int { return cmp.Compare(y.Wall, x.Wall) })
	return out
}

// profiled runs the loop as parallel does, timing each task and the loop, under the name of
// parallel's caller.
func (b *Backend) profiled(p *loopProfile, tasks int, fn func(worker, task int)) {
	site := callSite(3) // profiled, parallel, the op
	var busy atomic.Int64
	start := time.Now()
	b.pool.For(b.ctx, tasks, b.threads, func(w, t int) {
		t0 := time.Now()
		defer func() { busy.Add(int64(time.Since(t0))) }()
		fn(w, t)
	})
	wall := time.Since(start)
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sites[site]
	if s == nil {
		s = &LoopSite{Site: site}
		p.sites[site] = s
	}
	s.Loops++
	s.Tasks += tasks
	s.Wall += wall
	s.Busy += time.Duration(busy.Load())
}

// callSite names the caller skip frames up as "file.go:line function" (runtime.Caller: the
// logical frame, inlined or not).
func callSite(skip int) string {
	pc, file, line, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	fn := "?"
	if f := runtime.FuncForPC(pc); f != nil {
		fn = f.Name()
		if i := strings.LastIndex(fn, "/"); i >= 0 {
			fn = fn[i+1:]
		}
		if i := strings.Index(fn, "."); i >= 0 {
			fn = fn[i+1:]
		}
	}
	return fmt.Sprintf("%s:%d %s", filepath.Base(file), line, fn)
}
