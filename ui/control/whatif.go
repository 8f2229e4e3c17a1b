package control

// whatif_ctl.go: the Controller's side of the "what if" tab: one run of the current page
// under the tab's interventions against the window's finished run (engine.Session.WhatIf),
// and a head sweep (engine.Session.Sweep), each on the worker goroutine, behind the job in
// flight, with a context of its own (Cancel stops it) and the window's share of the time
// between blocks, as Compare has.
//
// Invariant: the effect shown is of the page and the finished run it was measured against
// (the result carries its layout and page); a newer what-if or sweep replaces one queued or
// running. Mutation that would silently break it: measuring against the window's run while
// it is being replaced (an Apply queued first): the worker runs jobs in order, so the
// what-if sees the run that Apply made, and says to Run all when it is not finished.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
)

// WhatIfResult is an intervention's effect on the page the window ran.
type WhatIfResult struct {
	*engine.Effect
	Settings engine.Settings // the intervened settings
	Layout   *geom.Layout
	Page     *imageproc.Page
}

// SweepResult is a head sweep of the page the window ran: one row per head, block-major.
type SweepResult struct {
	Rows         []engine.SweepRow
	Mode         string
	Depth, Heads int
}

// WhatIfProgress is where a what-if (blocks) or a sweep (runs) stands: Done of Of; Running
// is false in the last report (Err says why when it failed or was cancelled).
type WhatIfProgress struct {
	Sweep    bool
	Done, Of int
	Running  bool
	Err      error
}

// WhatIf runs the current page under s (the window's settings with the tab's
// interventions) and reports its effect against the window's finished run.
func (c *Controller) WhatIf(s engine.Settings) {
	c.startWhatIf(false, "what if: "+InterventionsOf(s), func(ctx context.Context, sess *session, progress func(int, int)) (func(), error) {
		be, err := c.Backends().New(s.Backend, s.Threads)
		if err != nil {
			return nil, err
		}
		e, err := sess.WhatIf(ctx, s, be, progress)
		if err != nil {
			return nil, err
		}
		res := &WhatIfResult{Effect: e, Settings: s, Layout: sess.Run.Layout, Page: sess.Input.Image}
		return func() {
			if c.OnWhatIf != nil {
				c.OnWhatIf(res)
			}
		}, nil
	})
}

// SweepHeads ablates every head of the current page in turn (mode: engine.AblateZero or
// AblateMean) and reports each run's change against the window's finished run.
func (c *Controller) SweepHeads(mode string) {
	c.startWhatIf(true, "head sweep ("+mode+")", func(ctx context.Context, sess *session, progress func(int, int)) (func(), error) {
		rows, err := sess.Sweep(ctx, "heads", mode, progress)
		if err != nil {
			return nil, err
		}
		cfg := sess.Checkpoint.Config
		res := &SweepResult{Rows: rows, Mode: mode, Depth: cfg.Depth, Heads: cfg.Heads}
		return func() {
			if c.OnSweep != nil {
				c.OnSweep(res)
			}
		}, nil
	})
}

// startWhatIf queues work (what: its name in the status line) behind the job in flight.
// work returns what to do on the UI goroutine with its result.
func (c *Controller) startWhatIf(sweep bool, what string, work func(context.Context, *session, func(int, int)) (func(), error)) {
	ctx, stop := c.sideJob(&c.whatIfStop, what)
	c.whatIfProgress(WhatIfProgress{Sweep: sweep, Running: true})
	c.enqueue(func() {
		defer stop()
		sess := c.current()
		if sess == nil {
			err := errors.New("open a checkpoint and an image first")
			c.fail(what, err)
			c.whatIfProgress(WhatIfProgress{Sweep: sweep, Err: err})
			return
		}
		c.gate.Hold()
		last := time.Now()
		show, err := work(ctx, sess, func(done, of int) {
			c.gate.Release() // the window's share between blocks, as in Run all
			c.lend(ctx, time.Since(last))
			c.gate.Hold()
			last = time.Now()
			c.status(Status{Text: fmt.Sprintf("%s: %d of %d %s", what, done, of, map[bool]string{false: "blocks", true: "runs"}[sweep]),
				Progress: float64(done) / float64(max(of, 1)), Busy: true})
			c.whatIfProgress(WhatIfProgress{Sweep: sweep, Done: done, Of: of, Running: true})
		})
		c.gate.Release()
		if err != nil {
			if errors.Is(err, context.Canceled) {
				c.status(Status{Text: what + " cancelled"})
			} else {
				c.fail(what, err)
			}
			c.whatIfProgress(WhatIfProgress{Sweep: sweep, Err: err})
			return
		}
		c.status(Status{Text: what + ": done", Progress: 1})
		c.whatIfProgress(WhatIfProgress{Sweep: sweep})
		c.do(show)
	})
}

func (c *Controller) whatIfProgress(p WhatIfProgress) {
	if c.OnWhatIfProgress != nil {
		c.do(func() { c.OnWhatIfProgress(p) })
	}
}
