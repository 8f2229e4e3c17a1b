package control

// compare.go: the Controller's Compare — the current image under two settings, measured as
// engine.CompareSessions measures (a warm-up pass each, then the sides interleaved over the
// passes), on sibling sessions of the window's: its checkpoint and page, never its run.
//
// Invariant: a Compare never stops or changes the main run: it is queued behind the job in
// flight with a context of its own (Cancel stops both), and its sides are new sessions. The
// mutation that would silently break it: running a side on the window's own session — the
// window's run would then show the side's blocks.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
)

// CompareResult is the same image measured under two settings (engine.CompareSessions: a
// warm-up pass each, then the sides interleaved over the repetitions), on the page it ran.
type CompareResult struct {
	*engine.Comparison
	Layout *geom.Layout
	Page   *imageproc.Page
}

// CompareProgress is where a Compare stands: pass Rep of Reps (-1: the warm-up) of Side 0
// (A) or 1 (B), Blocks of Depth done; Running is false in the last report (done, failed or
// cancelled: Err says which).
type CompareProgress struct {
	Rep, Reps           int
	Side, Blocks, Depth int
	Running             bool
	Err                 error
}

// Compare measures the current image under settings a and b as engine.CompareSessions does
// (opt: repetitions, blocks) and reports each side's per-block medians and ranges, B/A with
// its interval and the verdict, the largest output differences and where they lie. It
// never stops the main run: it is queued behind the job in flight and has a context of its
// own (Cancel stops both). The main session is untouched.
func (c *Controller) Compare(a, b engine.Settings, opt engine.CompareOptions) {
	ctx, stop := c.sideJob(&c.compareStop, "compare")
	c.compareProgress(CompareProgress{Running: true, Rep: -1})
	c.enqueue(func() {
		defer stop()
		sess := c.current()
		if sess == nil {
			err := errors.New("open a checkpoint and an image first")
			c.fail("compare", err)
			c.compareProgress(CompareProgress{Err: err})
			return
		}
		res, err := c.compare(ctx, sess, a, b, opt)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				c.status(Status{Text: "compare cancelled"})
			} else {
				c.fail("compare", err)
			}
			c.compareProgress(CompareProgress{Err: err})
			return
		}
		c.status(Status{Text: "compared " + a.Describe() + " vs " + b.Describe() + ": " + res.Verdict, Progress: 1})
		c.compareProgress(CompareProgress{Side: 1, Blocks: res.Blocks, Depth: res.Blocks, Rep: res.Reps - 1, Reps: res.Reps})
		if c.OnCompare != nil {
			c.do(func() { c.OnCompare(res) })
		}
	})
}

// sideJob is the context of a job that runs beside the main run (a Compare, a what-if):
// its own, kept in *slot, where it replaces (cancels) the one before it, and stopped by
// Cancel. When a job is in flight, the status says this one (what) is queued.
func (c *Controller) sideJob(slot *context.CancelFunc, what string) (context.Context, context.CancelFunc) {
	ctx, stop := context.WithCancel(context.Background())
	c.mu.Lock()
	if *slot != nil {
		(*slot)() // a newer one replaces one still queued or running
	}
	*slot = stop
	c.mu.Unlock()
	if c.pending.Load() > 0 {
		c.status(Status{Text: what + " queued: it starts when the job in progress ends", Busy: true})
	}
	return ctx, stop
}

func (c *Controller) compareProgress(p CompareProgress) {
	if c.OnCompareProgress != nil {
		c.do(func() { c.OnCompareProgress(p) })
	}
}

// compare opens both sides as siblings of sess (its checkpoint and page) and measures them.
// Worker goroutine only.
func (c *Controller) compare(ctx context.Context, sess *session, a, b engine.Settings, opt engine.CompareOptions) (*CompareResult, error) {
	var sides [2]*engine.Session
	for k, s := range []engine.Settings{a, b} {
		side, err := c.sibling(ctx, sess, s)
		if err != nil {
			return nil, fmt.Errorf("settings %s: %w", "AB"[k:k+1], err)
		}
		defer side.Close()
		sides[k] = side
	}
	// The gate is held for the whole Compare but between its blocks (outside the times it
	// takes: timePass), where the window gets its share as in Run all.
	c.gate.Hold()
	defer c.gate.Release()
	last := time.Now()
	cmp, err := engine.CompareSessions(ctx, sides[0], sides[1], opt, func(st engine.CompareStep) {
		c.gate.Release()
		c.lend(ctx, time.Since(last))
		c.gate.Hold()
		last = time.Now()
		what := fmt.Sprintf("pass %d of %d", st.Rep+1, st.Reps)
		if st.Rep < 0 {
			what = "warm-up pass"
		}
		c.status(Status{Text: fmt.Sprintf("compare: %s, side %s, block %d of %d", what, "AB"[st.Side:st.Side+1], st.Blocks, st.Of),
			Progress: float64(st.Blocks) / float64(max(st.Of, 1)), Busy: true})
		c.compareProgress(CompareProgress{Rep: st.Rep, Reps: st.Reps, Side: st.Side, Blocks: st.Blocks, Depth: st.Of, Running: true})
	})
	if err != nil {
		return nil, err
	}
	return &CompareResult{Comparison: cmp, Layout: sess.Run.Layout, Page: sess.Input.Image}, nil
}

// sibling opens sess's page under s (outputs kept, attention not), ready at block 0.
func (c *Controller) sibling(ctx context.Context, sess *session, s engine.Settings) (*engine.Session, error) {
	if s.MaxPixels != sess.Settings.MaxPixels {
		return nil, errors.New("compare keeps the page: max pixels must be the same on both sides")
	}
	be, err := c.Backends().New(s.Backend, s.Threads)
	if err != nil {
		return nil, err
	}
	s.Keep = engine.Keep{Outputs: true, Budget: c.ProbeBudget}
	return sess.Sibling(ctx, s, be)
}
