package par

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A held gate keeps a gated loop from starting any task; its release lets every task run.
// A loop whose context carries no gate runs through a held gate.
func TestHeldGateStopsGatedLoops(t *testing.T) {
	g := NewGate()
	g.Hold()
	var ran atomic.Int32
	finished := make(chan error, 1)
	go func() {
		finished <- For(WithGate(context.Background(), g), 100, 4, func(_, _ int) { ran.Add(1) })
	}()
	if err := For(context.Background(), 100, 4, func(_, _ int) {}); err != nil { // ungated: not held off
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for !g.Busy() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !g.Busy() {
		t.Fatal("the gated loop is not counted while it waits")
	}
	time.Sleep(50 * time.Millisecond)
	if n := ran.Load(); n != 0 {
		t.Fatalf("%d tasks ran while the gate was held", n)
	}
	g.Release()
	if err := <-finished; err != nil || ran.Load() != 100 {
		t.Fatalf("after the release: err %v, %d of 100 tasks", err, ran.Load())
	}
	if g.Busy() {
		t.Error("a finished loop is still counted")
	}
}

// Once Hold has returned, each worker starts at most the one task it had already passed the
// gate for; the rest wait for the release (counted from Hold's return, as TestCancelStops
// counts from cancel's).
func TestHoldStopsARunningLoop(t *testing.T) {
	const workers = 2
	g := NewGate()
	var started, afterHold atomic.Int32
	var holding atomic.Bool
	ctx, cancel := context.WithCancel(WithGate(context.Background(), g))
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	err := For(ctx, 1000000, workers, func(_, _ int) {
		if holding.Load() {
			afterHold.Add(1)
		}
		if started.Add(1) == 10 {
			g.Hold()
			holding.Store(true)
		}
	})
	if err != context.Canceled {
		t.Fatalf("err %v, want Canceled: a loop waiting at a held gate ends with its context", err)
	}
	if n := afterHold.Load(); n > workers {
		t.Errorf("%d tasks started after Hold returned, want at most %d (one in flight per worker)", n, workers)
	}
}

// Yield lends nothing when no gated loop wants the machine, waits for a short one to end,
// and stops lending at its bound when one runs on.
func TestYield(t *testing.T) {
	g := NewGate()
	if d := g.Yield(time.Second); d > 100*time.Millisecond {
		t.Errorf("no gated loop, but Yield lent %v", d)
	}
	stop := make(chan struct{})
	running := make(chan struct{})
	go For(WithGate(context.Background(), g), 1, 1, func(_, _ int) { close(running); <-stop })
	<-running
	if d := g.Yield(30 * time.Millisecond); d < 30*time.Millisecond {
		t.Errorf("a loop runs on, but Yield returned after %v of its 30ms", d)
	}
	go func() { time.Sleep(20 * time.Millisecond); close(stop) }()
	if d := g.Yield(time.Minute); d >= time.Minute {
		t.Errorf("the loop ended, but Yield lent its whole bound")
	}
	if g.Busy() {
		t.Error("busy after the loop ended")
	}
}

// A begun job is waited for as a loop is, between its loops too; its end is counted once.
func TestYieldWaitsForABegunJob(t *testing.T) {
	g := NewGate()
	end := g.Begin()
	if d := g.Yield(20 * time.Millisecond); d < 20*time.Millisecond {
		t.Errorf("a job is begun, but Yield returned after %v of its 20ms", d)
	}
	other := g.Begin()
	end()
	end() // a second call changes nothing
	if !g.Busy() {
		t.Fatal("the other job's count went with the first job's second end")
	}
	go func() { time.Sleep(10 * time.Millisecond); other() }()
	if d := g.Yield(time.Minute); d >= time.Minute {
		t.Error("the jobs ended, but Yield lent its whole bound")
	}
}
