package ui

// async.go: the one way the window computes a probe off the UI goroutine. A latest holds at
// most one computation; starting another cancels the one in flight, and a result lands (on
// the UI goroutine, through the controller) only if it is still the latest asked for. Its
// context ends with the run it is of (Controller.ProbeContext), so a new run stops it too,
// and carries the controller's gate: its loops wait while a block runs, and Run all, which
// lends the window time between blocks, waits for it (up to its share) as begun work.
//
// Invariant: a superseded computation never reaches the panels. Mutation that would silently
// break it: delivering every result as it finishes — a slow result for an old query would
// overwrite the newer one the user is looking at.

import "context"

// latest is a background computation of which only the newest request matters. UI
// goroutine only.
type latest struct {
	gen     int
	stop    context.CancelFunc
	running bool
}

// start runs compute off the UI goroutine, cancelling the computation in flight; land gets
// its result on the UI goroutine if no newer start came meanwhile.
func (l *latest) start(ctl *Controller, compute func(context.Context) (any, error), land func(any, error)) {
	l.cancel()
	l.gen++
	ctx, cancel := context.WithCancel(ctl.ProbeContext())
	l.stop, l.running = cancel, true
	gen := l.gen
	end := ctl.gate.Begin()
	go func() {
		v, err := compute(ctx)
		end()
		ctl.do(func() {
			if gen != l.gen {
				return // superseded (and cancelled)
			}
			l.running = false
			gone := ctx.Err() != nil // the run it was of is gone (a newer start would have changed gen)
			cancel()
			if gone && err != nil {
				return
			}
			land(v, err)
		})
	}()
}

// busy says whether a computation is in flight.
func (l *latest) busy() bool { return l.running }

// cancel stops the computation in flight; its result never lands.
func (l *latest) cancel() {
	if l.stop != nil {
		l.stop()
	}
	l.gen++
	l.running = false
}
