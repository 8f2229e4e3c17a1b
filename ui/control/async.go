package control

// async.go: the one way the window computes a probe off the UI goroutine. A Latest holds at
// most one computation; starting another cancels the one in flight, and a result lands (on
// the UI goroutine, through the Host) only if it is still the latest asked for. Its
// context ends with the run it is of (Host.ProbeContext), so a new run stops it too,
// and carries the controller's gate: its loops wait while a block runs, and Run all, which
// lends the window time between blocks, waits for it (up to its share) as begun work.
//
// Invariant: a superseded computation never reaches the panels. Mutation that would silently
// break it: delivering every result as it finishes — a slow result for an old query would
// overwrite the newer one the user is looking at.

import (
	"context"
	"sync"
	"time"
)

// Latest is a background computation of which only the newest request matters. UI
// goroutine only.
type Latest struct {
	gen     int
	stop    context.CancelFunc
	running bool
}

// Start runs compute off the UI goroutine, cancelling the computation in flight; land gets
// its result on the UI goroutine if no newer start came meanwhile.
func (l *Latest) Start(h Host, compute func(context.Context) (any, error), land func(any, error)) {
	l.StartWithin(h, 0, compute, land)
}

// StartWithin is Start, but the UI goroutine waits up to wait for the result: one that comes
// in time is returned (done) and never reaches land, so the caller draws it in the frame of
// the event that asked for it (a background result lands a frame later at the earliest:
// the GL loop handles events, then paints, once per tick). A result later than wait lands
// as Start's does. wait is the window's frame budget, never the computation's length: the
// UI goroutine is never held longer, however slow the probe (a shared scale over 27
// blocks, a probe waiting at the gate while a block runs).
func (l *Latest) StartWithin(h Host, wait time.Duration, compute func(context.Context) (any, error), land func(any, error)) (v any, err error, done bool) {
	l.Cancel()
	l.gen++
	ctx, cancel := context.WithCancel(h.ProbeContext())
	l.stop, l.running = cancel, true
	gen := l.gen
	end := h.BeginProbe()
	o := &handoff{waiting: wait > 0, inTime: make(chan result, 1)}
	go func() {
		v, err := compute(ctx)
		end()
		if o.give(result{v, err}) { // the UI goroutine takes it
			return
		}
		h.Do(func() {
			if gen != l.gen {
				return // superseded (and cancelled)
			}
			// the run it was of may be gone (a newer start would have changed gen)
			if l.finish(ctx, cancel, err) {
				land(v, err)
			}
		})
	}()
	if wait <= 0 {
		return nil, nil, false
	}
	r, ok := o.await(wait)
	if !ok { // it lands later, through land
		return nil, nil, false
	}
	if !l.finish(ctx, cancel, r.err) {
		return nil, nil, false // the run it was of is gone: its snapshot redraws everything
	}
	return r.v, r.err, true
}

// finish ends the computation whose result came: false when its run is gone and it failed
// (cancelled with it), so the result is dropped.
func (l *Latest) finish(ctx context.Context, cancel context.CancelFunc, err error) bool {
	l.running = false
	gone := ctx.Err() != nil
	cancel()
	return !(gone && err != nil)
}

// result is a computation's outcome.
type result struct {
	v   any
	err error
}

// handoff passes a result to the UI goroutine while it waits for it (StartWithin), or tells
// the computation to land it instead once the wait is over: exactly one of the two.
type handoff struct {
	mu      sync.Mutex
	waiting bool
	inTime  chan result // buffered: give never blocks
}

// give hands r to the waiting UI goroutine; false once it stopped waiting (r must land).
func (o *handoff) give(r result) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waiting {
		o.inTime <- r
	}
	return o.waiting
}

// await waits up to wait for the result; false when it did not come in time, and from then
// on give refuses it.
func (o *handoff) await(wait time.Duration) (result, bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case r := <-o.inTime:
		return r, true
	case <-timer.C:
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case r := <-o.inTime: // it came as the wait ended
		return r, true
	default:
		o.waiting = false
		return result{}, false
	}
}

// Busy says whether a computation is in flight.
func (l *Latest) Busy() bool { return l.running }

// Cancel stops the computation in flight; its result never lands.
func (l *Latest) Cancel() {
	if l.stop != nil {
		l.stop()
	}
	l.gen++
	l.running = false
}
