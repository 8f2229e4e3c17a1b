package cpu

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/internal/kernel"
)

// Ceiling measures every unit this machine's products run on, on the threads asked, each a
// positive finite rate: the widest FMA kernel the engine uses (none off amd64/arm64) and the
// tile unit where the AMX path is on.
func TestCeilingUnits(t *testing.T) {
	var want []string
	switch {
	case kernel.HasAVX512:
		want = append(want, "fma6x32")
	case kernel.HasFMA:
		want = append(want, "fma6x16")
	}
	if kernel.HasAMX {
		want = append(want, "amx")
	}
	rates := Ceiling(context.Background(), 3, 20*time.Millisecond)
	var got []string
	for _, r := range rates {
		got = append(got, r.Unit)
		if r.Threads != 3 {
			t.Errorf("%s: threads %d, want 3", r.Unit, r.Threads)
		}
		if !(r.GFLOPsPerThread > 0) || math.IsInf(r.GFLOPsPerThread, 0) {
			t.Errorf("%s: %g GFLOP/s a thread", r.Unit, r.GFLOPsPerThread)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("units %v, want %v", got, want)
	}
}

// A cancelled context ends a unit's run at once, however long it was asked to run: a Ctrl-C
// in `inspector ceiling` does not wait out --seconds.
func TestCeilingStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan []UnitRate)
	go func() { done <- Ceiling(ctx, 2, time.Hour) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Ceiling ran on after its context was cancelled")
	}
}

// A unit's calls are counted from every thread: with bodies that only count, the calls run
// reports are all the calls the threads made after their warm-up call.
func TestCeilingCountsEveryThread(t *testing.T) {
	const threads = 4
	var (
		mu   sync.Mutex
		next int
		made [threads]atomic.Int64
	)
	u := ceilingUnit{name: "count", flops: 1, prepare: func() func() {
		mu.Lock() // prepare runs on each thread at once; a counter each
		i := next
		next++
		mu.Unlock()
		return func() { made[i].Add(1) }
	}}
	calls, wall := u.run(context.Background(), threads, 5*time.Millisecond)
	var sum int64
	for i := range made {
		sum += made[i].Load()
	}
	if calls != sum-threads {
		t.Errorf("run counted %d calls; the threads made %d after their warm-ups", calls, sum-threads)
	}
	if wall <= 0 {
		t.Errorf("wall %v", wall)
	}
}
