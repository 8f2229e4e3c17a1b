package par

// pool.go: For's loops on goroutines that stay: a Pool keeps workers-1 goroutines between
// loops, spinning a short while for the next one before they sleep.
//
// Why: For starts its goroutines afresh every call, and Go wakes sleeping threads one after
// another (one spinning thread at a time finds the next goroutine and wakes the next thread).
// On 16 threads of the 16-core device the AMX pack of the 8B tower's proj (72 tasks of 7-30
// us) took 160-240 us of wall for 0.5-0.6 ms of task time, 35-40 us a thread: the rest was
// the loop waiting for its workers. The CPU backend runs ~20 loops a block, one op after
// another with little between them; workers that spin through those gaps begin the next loop
// at once. OpenMP runtimes do the same (their spin-wait before sleeping).
//
// Invariant: a Pool's loop is For's loop (the same body: tasks handed out one at a time, ctx,
// the gate, a panic re-raised on the caller, the caller's SetPanicOnFault on every worker), on
// worker ids 0 .. workers-1 of that call, and For returns only when every worker of the call
// has left the body: no task of a loop runs after its For has returned. A loop that finds the
// pool busy (a loop inside a task, or two callers at once) runs on fresh goroutines (For).
// Mutation that would silently break it: the caller returning when its own share is done
// without waiting for the workers' (pending): the op's last tasks would still be writing its
// output while the next op reads it (TestPoolWaitsForEveryTask).

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long an idle worker (or a caller waiting for its workers) checks for the
// next loop before it sleeps: longer than the gaps between one op's loop and the next within a
// block, far shorter than the gaps between runs.
const spinFor = 200 * time.Microsecond

// Pool holds size-1 worker goroutines for loops of at most size workers (the caller is one).
type Pool struct {
	size    int
	busy    sync.Mutex               // one loop at a time
	loop    atomic.Pointer[poolLoop] // the latest loop: a new pointer is a new loop to join
	pending atomic.Int64             // the current loop's workers (not the caller) still inside it
	closed  atomic.Bool
	workers []poolWorker // by worker id; 0 is the caller's sleep while it waits for the others
	stopped sync.WaitGroup
}

// poolWorker is one sleeper's wake-up: parked says it is asleep (or about to be) on wake.
type poolWorker struct {
	parked atomic.Bool
	wake   chan struct{} // buffered 1: a wake-up is never lost and never blocks the sender
}

// poolLoop is one For call as the workers see it.
type poolLoop struct {
	workers int // worker ids 1 .. workers-1 take part (0 is the caller)
	body    func(w int)
	faults  bool // the caller's SetPanicOnFault
}

// NewPool starts a pool for loops of at most size workers (size-1 goroutines; none for 1).
func NewPool(size int) *Pool {
	p := &Pool{size: max(1, size)}
	p.workers = make([]poolWorker, p.size)
	for w := range p.workers {
		p.workers[w].wake = make(chan struct{}, 1)
		if w > 0 {
			p.stopped.Add(1)
			go p.work(w)
		}
	}
	return p
}

// Close stops the workers (after the loop in flight, if any) and waits for them to exit. A nil
// pool has none.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.busy.Lock()
	defer p.busy.Unlock()
	if p.closed.Swap(true) {
		return
	}
	p.loop.Store(&poolLoop{}) // a new pointer: every worker wakes, sees closed and exits
	for w := 1; w < p.size; w++ {
		p.workers[w].wakeUp()
	}
	p.stopped.Wait()
}

// For is par.For on the pool's workers (see the package's For for the contract); on a nil
// pool, par.For.
func (p *Pool) For(ctx context.Context, n, workers int, fn func(worker, task int)) error {
	if p == nil || workers > p.size || !p.busy.TryLock() {
		return For(ctx, n, workers, fn)
	}
	defer p.busy.Unlock()
	if p.closed.Load() {
		return For(ctx, n, workers, fn)
	}
	return run(ctx, n, workers, fn, p.start)
}

// start runs body(1 .. workers-1) on the pool's workers and returns a wait for them.
func (p *Pool) start(workers int, body func(w int), faults bool) (wait func()) {
	p.pending.Store(int64(workers - 1))
	p.loop.Store(&poolLoop{workers: workers, body: body, faults: faults})
	for w := 1; w < workers; w++ {
		p.workers[w].wakeUp()
	}
	return func() {
		p.workers[0].await(func() bool { return p.pending.Load() == 0 })
	}
}

// wakeUp wakes s if it sleeps (or is about to).
func (s *poolWorker) wakeUp() {
	if s.parked.Swap(false) {
		s.wake <- struct{}{}
	}
}

// work is worker w's life: wait for a loop it has not seen, run its share if the loop
// includes it, tell the caller when it is the last. Each loop is taken at most once (by its
// pointer), and a loop that includes w cannot end, so cannot be replaced, before w is done.
func (p *Pool) work(w int) {
	defer p.stopped.Done()
	var seen *poolLoop
	for {
		p.workers[w].await(func() bool { return p.loop.Load() != seen })
		l := p.loop.Load()
		seen = l
		if p.closed.Load() {
			return
		}
		if w >= l.workers {
			continue
		}
		debug.SetPanicOnFault(l.faults)
		l.body(w)
		if p.pending.Add(-1) == 0 {
			p.workers[0].wakeUp()
		}
	}
}

// await returns once ready() holds: checking it for spinFor (yielding the thread now and then
// to any other goroutine), then asleep on s.wake until a wakeUp, checking again each time.
func (s *poolWorker) await(ready func() bool) {
	start := time.Now()
	for i := 0; !ready(); i++ {
		if i%64 != 63 {
			continue
		}
		if time.Since(start) < spinFor {
			runtime.Gosched()
			continue
		}
		s.parked.Store(true)
		if ready() { // it came between the last check and parked: take back the sleep
			if !s.parked.Swap(false) {
				<-s.wake // a waker cleared parked first: its wake-up is on the way
			}
			return
		}
		<-s.wake
		start = time.Now()
	}
}
