package par

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestEveryTaskOnce(t *testing.T) {
	for _, c := range []struct{ n, workers int }{{0, 4}, {1, 4}, {7, 3}, {1000, 4}, {5, 1}, {3, 10}} {
		counts := make([]atomic.Int32, c.n)
		var maxW atomic.Int32
		Do(c.n, c.workers, func(w, task int) {
			counts[task].Add(1)
			for {
				m := maxW.Load()
				if int32(w) <= m || maxW.CompareAndSwap(m, int32(w)) {
					break
				}
			}
		})
		for i := range counts {
			if counts[i].Load() != 1 {
				t.Fatalf("n=%d workers=%d: task %d ran %d times", c.n, c.workers, i, counts[i].Load())
			}
		}
		if int(maxW.Load()) >= max(1, c.workers) {
			t.Errorf("worker id %d with %d workers", maxW.Load(), c.workers)
		}
	}
}

// Once cancel has returned, each worker starts at most one more task (one that passed its
// check just before the cancel): counted from the cancel's return, not from when it was
// called, since on a loaded machine the goroutine calling cancel can be descheduled inside it
// while the other runs tens of thousands of empty tasks (seen: 88,317).
func TestCancelStops(t *testing.T) {
	const workers = 2
	ctx, cancel := context.WithCancel(context.Background())
	var ran, after atomic.Int32
	var cancelled atomic.Bool
	err := For(ctx, 1000000, workers, func(_, task int) {
		if cancelled.Load() {
			after.Add(1)
		}
		if ran.Add(1) == 10 {
			cancel()
			cancelled.Store(true)
		}
	})
	if err != context.Canceled || after.Load() > workers {
		t.Errorf("err %v, %d tasks started after the cancel returned, want Canceled and at most %d", err, after.Load(), workers)
	}
}

func TestPanicReachesCaller(t *testing.T) {
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the task's panic", p)
		}
	}()
	Do(50, 3, func(_, task int) {
		if task == 17 {
			panic("boom")
		}
	})
	t.Error("no panic")
}

func TestRangesCover(t *testing.T) {
	for _, c := range []struct{ n, minChunk int }{{0, 4}, {1, 64}, {100, 1}, {1000, 64}, {1001, 16}, {7, 0}} {
		hit := make([]atomic.Int32, c.n)
		Ranges(c.n, c.minChunk, func(lo, hi int) {
			if lo >= hi {
				t.Errorf("empty range [%d, %d)", lo, hi)
			}
			for i := lo; i < hi; i++ {
				hit[i].Add(1)
			}
		})
		for i := range hit {
			if hit[i].Load() != 1 {
				t.Fatalf("n=%d minChunk=%d: item %d covered %d times", c.n, c.minChunk, i, hit[i].Load())
			}
		}
	}
}

// RangesOn covers [0, n) exactly too, in at most threads ranges (a run's own thread count,
// not the machine's: a bench at 2 threads keeps its host work on 2).
func TestRangesOnKeepsToItsThreads(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		const n = 1000
		hit := make([]atomic.Int32, n)
		var ranges atomic.Int32
		RangesOn(n, 8, threads, func(lo, hi int) {
			ranges.Add(1)
			for i := lo; i < hi; i++ {
				hit[i].Add(1)
			}
		})
		for i := range hit {
			if hit[i].Load() != 1 {
				t.Fatalf("%d threads: item %d covered %d times", threads, i, hit[i].Load())
			}
		}
		if got := ranges.Load(); got > int32(threads) || (runtime.GOMAXPROCS(0) >= threads && got != int32(threads)) {
			t.Errorf("%d threads: %d ranges", threads, got)
		}
	}
}
