package par

// gate.go: one owner's work (the window's run: a block, a Compare pass) holds off work of
// lower rank (the window's probes: head statistics, attention rows, the rollout table) that
// runs through For with a context carrying the gate. While the gate is held, such a loop
// hands out no new task; the tasks in flight finish (a probe task is a few queries: well
// under a millisecond to a few). The owner's own loops carry no gate and never wait.
//
// Invariant: while the gate is held, no gated task starts. Mutation that would silently
// break it: checking the gate once when a loop starts rather than before every task — a
// probe loop begun between two blocks would run on through the next block, and that block's
// time would hold the probe's (the window's Run all measured 1.05-2.45x the CLI's).

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Gate is held by one owner around its work; gated loops wait while it is held. The zero
// value is not ready: use NewGate.
type Gate struct {
	mu    sync.Mutex
	held  int           // Hold calls not yet released
	open  chan struct{} // closed while held == 0
	loops int           // gated loops and begun jobs, running or waiting
	idle  chan struct{} // closed while loops == 0
}

// NewGate is an open gate with no loop behind it.
func NewGate() *Gate {
	g := &Gate{open: make(chan struct{}), idle: make(chan struct{})}
	close(g.open)
	close(g.idle)
	return g
}

// Hold stops gated loops from starting tasks until the matching Release.
func (g *Gate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == 0 {
		g.open = make(chan struct{})
	}
	g.held++
}

// Release ends one Hold; with the last, the gated loops go on.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == 0 {
		panic("par: Release of a gate not held")
	}
	if g.held--; g.held == 0 {
		close(g.open)
	}
}

// Begin counts a job of lower rank in until end is called: Yield then waits for it as it
// waits for a gated loop, between its loops too (a job that prepares before its next loop
// is still work the owner lends time to). end may be called once.
func (g *Gate) Begin() (end func()) {
	g.enter()
	var once sync.Once
	return func() { once.Do(g.leave) }
}

// Yield lends the gated loops and begun jobs the machine for at most d, or until none is
// running or waiting (whichever comes first), and says how long it lent. It is called by the owner
// between two pieces of its work, with the gate not held: the time it returns is the
// lower-rank work's, and the owner shows it as such.
func (g *Gate) Yield(d time.Duration) time.Duration {
	g.mu.Lock()
	idle := g.idle
	g.mu.Unlock()
	start := time.Now()
	select {
	case <-idle:
		return 0
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
	return time.Since(start)
}

// Busy says whether a gated loop or a begun job is running or waiting.
func (g *Gate) Busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.loops > 0
}

// enter counts a gated loop in; leave counts it out.
func (g *Gate) enter() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loops == 0 {
		g.idle = make(chan struct{})
	}
	g.loops++
}

func (g *Gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loops--; g.loops == 0 {
		close(g.idle)
	}
}

// pass waits until the gate is open or done is closed; false when done was. It first
// yields the processor: the owner, woken by a timer at the end of a Yield, would otherwise
// wait for the Go scheduler to preempt a gated loop's worker (up to 10 ms) before it can
// hold the gate again.
func (g *Gate) pass(done <-chan struct{}) bool {
	runtime.Gosched()
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
		return true
	default:
	}
	select {
	case <-open:
		return true
	case <-done:
		return false
	}
}

type gateKey struct{}

// WithGate is ctx with g: For loops run under it wait while g is held.
func WithGate(ctx context.Context, g *Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

// gateOf is the gate ctx carries (nil: none).
func gateOf(ctx context.Context) *Gate {
	g, _ := ctx.Value(gateKey{}).(*Gate)
	return g
}
