// This file keeps one invariant: parallelFor calls fn on disjoint [lo,hi)
// ranges that exactly cover [0,n) and returns only after all of them ran, so
// callers that write only their own rows stay deterministic.
// Mutation that would silently break it: computing chunk as n/workers
// (rounded down) drops the last n%workers rows, leaving them zero.
package imageproc

import (
	"runtime"
	"sync"
)

// parallelFor splits [0,n) into contiguous chunks of at least minChunk items
// and runs fn on each, concurrently when there is more than one chunk.
func parallelFor(n, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), (n+minChunk-1)/max(minChunk, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
