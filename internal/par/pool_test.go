package par

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every task of every loop runs once, on a worker id of its own call, loop after loop (the
// workers spin between close loops and sleep between far ones: both are crossed here).
func TestPoolRunsEveryTaskOnce(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	for i := range 300 {
		n, workers := 1+i%37, 1+i%4
		counts := make([]atomic.Int32, n)
		var badWorker atomic.Int32
		if err := p.For(context.Background(), n, workers, func(w, task int) {
			if w < 0 || w >= workers {
				badWorker.Store(int32(w) + 1)
			}
			counts[task].Add(1)
		}); err != nil {
			t.Fatal(err)
		}
		for task := range counts {
			if c := counts[task].Load(); c != 1 {
				t.Fatalf("loop %d (%d tasks, %d workers): task %d ran %d times", i, n, workers, task, c)
			}
		}
		if w := badWorker.Load(); w != 0 {
			t.Fatalf("loop %d: worker id %d of %d", i, w-1, workers)
		}
		if i%50 == 49 {
			time.Sleep(3 * spinFor) // the workers fall asleep: the next loop wakes them
		}
	}
}

// For returns only after every task of its loop has finished, the slow ones on the pool's
// workers included.
func TestPoolWaitsForEveryTask(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	for i := range 20 {
		var finished atomic.Int32
		p.For(context.Background(), 8, 4, func(w, task int) {
			d := time.Duration(1+task%3) * time.Millisecond
			if w != 0 {
				d += 2 * time.Millisecond // the workers' tasks end after the caller's
			}
			time.Sleep(d)
			finished.Add(1)
		})
		if f := finished.Load(); f != 8 {
			t.Fatalf("loop %d: For returned with %d of 8 tasks finished", i, f)
		}
	}
}

// A panic in a task reaches the caller with its value, and the pool runs the next loop.
func TestPoolPanicReachesCaller(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	func() {
		defer func() {
			if r := recover(); r != "task 5" {
				t.Fatalf("recovered %v, want the task's panic", r)
			}
		}()
		p.For(context.Background(), 12, 3, func(_, task int) {
			if task == 5 {
				panic("task 5")
			}
		})
	}()
	var ran atomic.Int32
	p.For(context.Background(), 12, 3, func(_, _ int) { ran.Add(1) })
	if ran.Load() != 12 {
		t.Fatalf("after a panic: %d of 12 tasks ran", ran.Load())
	}
}

// A cancelled context stops the loop with its error.
func TestPoolStopsOnCancel(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	err := p.For(ctx, 1000, 3, func(_, task int) {
		if ran.Add(1) == 10 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || ran.Load() >= 1000 {
		t.Fatalf("err %v after %d tasks, want Canceled before the end", err, ran.Load())
	}
}

// A loop inside a task, and two callers at once, run (on fresh goroutines) instead of waiting
// for the busy pool.
func TestPoolNestedAndConcurrent(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	var inner atomic.Int32
	p.For(context.Background(), 6, 3, func(_, _ int) {
		p.For(context.Background(), 4, 3, func(_, _ int) { inner.Add(1) })
	})
	if inner.Load() != 24 {
		t.Fatalf("nested loops ran %d of 24 inner tasks", inner.Load())
	}
	var wg sync.WaitGroup
	var total atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				p.For(context.Background(), 10, 3, func(_, _ int) { total.Add(1) })
			}
		}()
	}
	wg.Wait()
	if total.Load() != 4*50*10 {
		t.Fatalf("concurrent callers ran %d of %d tasks", total.Load(), 4*50*10)
	}
}

// Close ends the workers' goroutines; a closed pool still runs loops (on fresh goroutines).
func TestPoolCloseEndsWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	p := NewPool(6)
	p.For(context.Background(), 6, 6, func(_, _ int) {})
	if g := runtime.NumGoroutine(); g < before+5 {
		t.Fatalf("%d goroutines with the pool, want at least %d", g, before+5)
	}
	p.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after Close, want %d", g, before)
	}
	var ran atomic.Int32
	p.For(context.Background(), 5, 6, func(_, _ int) { ran.Add(1) })
	if ran.Load() != 5 {
		t.Fatalf("closed pool ran %d of 5 tasks", ran.Load())
	}
}

// BenchmarkLoop: the wall of one loop of `threads` tasks of ~5 us each, 20 us of the caller's
// own work between loops (an op's bookkeeping), on goroutines started per loop (For) and on a
// Pool: what a loop costs beyond its work, the pool's case for existing. Per thread count up to
// NumCPU.
func BenchmarkLoop(b *testing.B) {
	work := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	for threads := 2; threads <= runtime.NumCPU(); threads *= 2 {
		p := NewPool(threads)
		for _, way := range []string{"for", "pool"} {
			b.Run(fmt.Sprintf("%s/threads%d", way, threads), func(b *testing.B) {
				for range b.N {
					task := func(_, _ int) { work(5 * time.Microsecond) }
					if way == "pool" {
						p.For(context.Background(), threads, threads, task)
					} else {
						For(context.Background(), threads, threads, task)
					}
					work(20 * time.Microsecond)
				}
			})
		}
		p.Close()
	}
}
