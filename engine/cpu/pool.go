// pool.go: a persistent worker pool with a dynamic parallel-for over task indices.
//
// Invariant: a task index names a fixed piece of the output, decided by the op from the shapes;
// which worker picks it up (dynamic, via an atomic counter) never changes what is computed.
// The worker id is only a key into per-worker scratch.
// Mutation that would silently break it: passing the worker id (or the thread count) into the
// arithmetic, e.g. sizing a reduction's chunks by it.
package cpu

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type pool struct {
	n      int
	jobs   []chan func(int) // jobs[w] feeds worker w, for w >= 1; worker 0 is the caller
	wg     sync.WaitGroup
	once   sync.Once
	failed atomic.Pointer[workerPanic]
}

type workerPanic struct{ v any }

func newPool(n int) *pool {
	p := &pool{n: n, jobs: make([]chan func(int), n)}
	for w := 1; w < n; w++ {
		ch := make(chan func(int))
		p.jobs[w] = ch
		go p.serve(w, ch)
	}
	return p
}

func (p *pool) serve(w int, ch chan func(int)) {
	for f := range ch {
		p.runOne(w, f)
	}
}

// runOne runs f for worker w, turning a panic into a recorded failure that the caller
// re-raises, so a bad op panics on the goroutine that called it.
func (p *pool) runOne(w int, f func(int)) {
	defer p.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			p.failed.CompareAndSwap(nil, &workerPanic{r})
		}
	}()
	f(w)
}

func (p *pool) close() {
	p.once.Do(func() {
		for w := 1; w < p.n; w++ {
			close(p.jobs[w])
		}
	})
}

// parallel calls fn(worker, task) once for every task in [0, tasks), spread over the pool.
// It returns when all have finished.
func (p *pool) parallel(tasks int, fn func(worker, task int)) {
	if tasks <= 0 {
		return
	}
	workers := min(p.n, tasks)
	if workers == 1 {
		for t := range tasks {
			fn(0, t)
		}
		return
	}
	var next atomic.Int64
	body := func(w int) {
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			fn(w, t)
		}
	}
	p.wg.Add(workers)
	for w := 1; w < workers; w++ {
		p.jobs[w] <- body
	}
	p.runOne(0, body)
	p.wg.Wait()
	if f := p.failed.Swap(nil); f != nil {
		panic(fmt.Sprintf("cpu: worker panic: %v", f.v))
	}
}

// chunks is the number of pieces of size at most size that cover n.
func chunks(n, size int) int { return (n + size - 1) / size }
