// Package par is the project's one parallel-for: tasks [0, n) handed out one at a time to a
// few goroutines, stopped when a context is done, a panic in a task re-raised on the caller.
// The CPU backend, the probes and image preprocessing all use it; the CPU backend, from
// 8 threads, on a Pool's goroutines kept between loops (pool.go).
//
// Invariant: every task index in [0, n) runs exactly once (unless ctx stops the loop), and
// which goroutine runs it never changes what it computes: callers key only scratch memory on
// the worker id, never arithmetic. Mutation that would silently break it: handing out tasks
// in contiguous chunks of n/workers rounded down — the last n%workers tasks never run and
// their outputs stay zero.
package par

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Workers is the number of goroutines worth starting for n tasks: at most GOMAXPROCS.
func Workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// For calls fn(worker, task) for every task in [0, n) on at most workers goroutines (the
// caller's included; worker ids run from 0 to workers-1). Once ctx is done it hands out no
// more tasks, lets the running ones finish and returns ctx.Err(). When ctx carries a gate
// (WithGate), no task starts while the gate is held (gate.go). A panic in fn is re-raised
// on the caller, with its value, after every worker stopped. The goroutines it starts turn
// a memory fault (a mapped file truncated under them) into such a panic
// (debug.SetPanicOnFault), as the caller's goroutine does when the caller asked for it.
func For(ctx context.Context, n, workers int, fn func(worker, task int)) error {
	return run(ctx, n, workers, fn, spawn)
}

// spawn starts body(1 .. workers-1) on goroutines of their own, each with the caller's
// SetPanicOnFault, and returns a wait for them.
func spawn(workers int, body func(w int), faults bool) (wait func()) {
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			debug.SetPanicOnFault(faults)
			body(w)
		}()
	}
	return wg.Wait
}

// run is For's loop, its workers 1 .. workers-1 started by start (fresh goroutines: spawn; a
// Pool's: Pool.start) and the caller as worker 0.
func run(ctx context.Context, n, workers int, fn func(worker, task int),
	start func(workers int, body func(w int), faults bool) (wait func())) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	workers = max(1, min(workers, n))
	done := ctx.Done()
	gate := gateOf(ctx)
	if gate != nil {
		gate.enter()
		defer gate.leave()
	}
	var next atomic.Int64
	var stopped atomic.Bool
	var failed atomic.Pointer[any]
	body := func(w int) {
		defer func() {
			if p := recover(); p != nil {
				failed.CompareAndSwap(nil, &p)
				stopped.Store(true)
			}
		}()
		for !stopped.Load() {
			t := int(next.Add(1) - 1)
			if t >= n {
				return
			}
			if done != nil {
				select {
				case <-done:
					stopped.Store(true)
					return
				default:
				}
			}
			if gate != nil && !gate.pass(done) {
				stopped.Store(true)
				return
			}
			fn(w, t)
		}
	}
	faults := debug.SetPanicOnFault(false) // the caller's choice, for the workers too
	debug.SetPanicOnFault(faults)
	wait := start(workers, body, faults)
	body(0)
	wait()
	if p := failed.Load(); p != nil {
		panic(*p)
	}
	if stopped.Load() {
		return ctx.Err()
	}
	return nil
}

// Do is For without a context: every task runs.
func Do(n, workers int, fn func(worker, task int)) {
	For(context.Background(), n, workers, fn)
}

// Ranges splits [0, n) into contiguous ranges of at least minChunk items (one per
// goroutine worth starting) and calls fn on each, concurrently; the ranges cover [0, n)
// exactly. For row loops whose rows are cheap alone.
func Ranges(n, minChunk int, fn func(lo, hi int)) { RangesOn(n, minChunk, 0, fn) }

// RangesOn is Ranges on at most threads goroutines (0: GOMAXPROCS), for work that belongs
// to a run with a thread count of its own.
func RangesOn(n, minChunk, threads int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := Workers((n + max(minChunk, 1) - 1) / max(minChunk, 1))
	if threads > 0 {
		workers = min(workers, threads)
	}
	chunk := (n + workers - 1) / workers
	Do((n+chunk-1)/chunk, workers, func(_, t int) { fn(t*chunk, min((t+1)*chunk, n)) })
}
