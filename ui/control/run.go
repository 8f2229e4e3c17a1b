package control

// run.go: the main run's jobs — open a page (a session: its checkpoint, image and
// settings), apply new settings, restart, step a block, run all, play — and what each says
// on the status line. Run all lends the window a share of each block's time between blocks
// (lend), for its drawing and probes, and records it as the block's window time.
//
// Invariant: a block's timing is its own work's — the window's time between blocks is
// recorded beside it (WindowTime), never in it, and the probes wait at the gate while a
// block runs. The mutation that would silently break it: lending the window its time while
// holding the gate (or timing the step from the click) — the probes' work, or the pause
// before a Step, would be counted as the block's.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/probe"
)

// Open loads a checkpoint and an image with the given settings and runs every block.
func (c *Controller) Open(dir, image string, s engine.Settings) {
	ctx := c.newContext()
	c.mu.Lock()
	c.note = ""
	c.mu.Unlock()
	c.enqueue(func() {
		c.status(Status{Text: "opening " + dir, Busy: true})
		if err := c.openSession(ctx, dir, image, s); err != nil {
			c.openFailed("open", err)
			return
		}
		c.runAll(ctx)
	})
}

// Apply re-runs the current checkpoint and image under new settings, from block 0: every
// setting changes timings, max pixels changes the page too.
func (c *Controller) Apply(s engine.Settings) {
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	if sess == nil {
		return
	}
	msg := ChangeMessage(sess.Settings, s)
	ctx := c.newContext()
	c.enqueue(func() {
		c.mu.Lock()
		c.note = ""
		c.mu.Unlock()
		if err := c.openSession(ctx, sess.Dir, sess.Image, s); err != nil {
			c.openFailed("apply settings", err)
			return
		}
		c.mu.Lock()
		c.note = msg // on the status line while this run goes on, and on its last status
		c.mu.Unlock()
		c.status(Status{Text: "applied", Busy: true})
		c.runAll(ctx)
		c.mu.Lock()
		c.note = "" // later statuses (a Step, an export, a Compare) are not about this change
		c.mu.Unlock()
	})
}

// Restart starts the same page again from block 0 without running.
func (c *Controller) Restart() {
	c.newContext() // cancels a job in flight
	c.enqueue(func() {
		c.mu.Lock()
		sess := c.sess
		c.mu.Unlock()
		if sess == nil {
			return
		}
		if err := c.restart(sess); err != nil {
			c.fail("restart", err)
			return
		}
		c.status(Status{Text: "restarted: block 0 is next"})
	})
}

// Step queues the next block (or the merger after the last): every click counts, so clicks
// while a block runs step the blocks after it in turn (QueuedSteps says how many wait); Cancel,
// Pause and any other job drop the ones not started.
func (c *Controller) Step() {
	ctx := c.stepContext()
	c.mu.Lock()
	gen := c.steps.add()
	c.mu.Unlock()
	c.enqueue(func() {
		c.mu.Lock()
		started := c.steps.start(gen)
		more := c.steps.queued > 0
		c.mu.Unlock()
		if !started {
			return
		}
		defer func() {
			c.mu.Lock()
			c.steps.running = false
			c.mu.Unlock()
		}()
		c.stepOnce(ctx, more) // more Steps wait: Cancel stays live between their blocks
	})
}

// stepQueue is the Step clicks not yet run: queued, and whether one's block runs. Guarded by
// the Controller's mu.
//
// Invariant: a click is counted once, from the click to the start of its block (queued) and
// until that block ends (running); a dropped click never runs (its generation is gone).
// Mutation that would silently break it: counting a dropped click when its job comes up — the
// button would show Steps waiting that never run.
type stepQueue struct {
	gen     int  // the clicks' generation: drop starts a new one
	queued  int  // clicks of this generation whose block has not started
	running bool // a Step's block runs
}

// add counts a click and returns its generation.
func (q *stepQueue) add() int { q.queued++; return q.gen }

// start says whether a click of generation gen runs now (not dropped), and counts it running.
func (q *stepQueue) start(gen int) bool {
	if gen != q.gen {
		return false
	}
	q.queued--
	q.running = true
	return true
}

// drop forgets the clicks not started.
func (q *stepQueue) drop() { q.gen, q.queued = q.gen+1, 0 }

// QueuedSteps is the Step clicks waiting behind the block in flight.
func (c *Controller) QueuedSteps() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.steps.queued
}

// Stepping says whether a Step's block runs or Steps wait: Step stays offered then, each
// click one more block.
func (c *Controller) Stepping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.steps.running || c.steps.queued > 0
}

// stepContext is the context of the Steps queued or in flight, so that several Step clicks
// in a row each step one more block (a new context would cancel the Step before it); any
// other job's context is cancelled as newContext does.
func (c *Controller) stepContext() context.Context {
	c.mu.Lock()
	if c.stepCtx != nil && c.stepCtx.Err() == nil {
		defer c.mu.Unlock()
		return c.stepCtx
	}
	c.mu.Unlock()
	ctx := c.newContext()
	c.mu.Lock()
	c.stepCtx = ctx
	c.mu.Unlock()
	return ctx
}

// RunAll runs the remaining blocks and the merger.
func (c *Controller) RunAll() {
	ctx := c.newContext()
	c.enqueue(func() {
		sess := c.current()
		if sess == nil {
			return
		}
		c.runAll(ctx)
	})
}

// Play steps one block at a time with a pause between, until paused or done.
func (c *Controller) Play() {
	ctx := c.newContext()
	c.mu.Lock()
	c.playing = true
	c.mu.Unlock()
	c.enqueue(func() { c.playStep(ctx) })
}

// Pause stops playing after the block in flight, and drops the Steps not started.
func (c *Controller) Pause() {
	c.mu.Lock()
	c.playing = false
	c.steps.drop()
	c.mu.Unlock()
}

// Playing says whether Play is stepping.
func (c *Controller) Playing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.playing
}

func (c *Controller) playStep(ctx context.Context) {
	c.mu.Lock()
	playing := c.playing
	c.mu.Unlock()
	if !playing || ctx.Err() != nil {
		return
	}
	if !c.stepOnce(ctx, true) {
		c.Pause()
		return
	}
	time.AfterFunc(c.PlayDelay, func() { c.enqueue(func() { c.playStep(ctx) }) })
}

// openFailed reports a session that did not open: a cancel (during an activation patch's
// source run) is not an error.
func (c *Controller) openFailed(what string, err error) {
	if errors.Is(err, context.Canceled) {
		c.status(Status{Text: what + ": cancelled before block 0 (while the patch's source image ran)"})
		return
	}
	c.fail(what, err)
}

// openSession opens a session of dir and image under s, keeping everything the probes
// use and the taps s asks for, and makes it current; ctx stops what opening runs (an
// activation patch's source image). Worker goroutine only.
func (c *Controller) openSession(ctx context.Context, dir, image string, s engine.Settings) error {
	be, note, err := c.newBackend(&s)
	if err != nil {
		return err
	}
	s.Keep = engine.Keep{Outputs: true, Attention: true, Taps: s.Keep.Taps, Budget: c.ProbeBudget}
	es, err := engine.OpenSession(ctx, dir, image, s, be)
	if err != nil {
		return err
	}
	es.SetBackendNote(note)
	sess := &session{Session: es}
	for _, n := range es.Notes {
		c.status(Status{Text: n, Busy: true})
	}
	es.Observers = append(es.Observers, func(r engine.BlockResult) { sess.stats = append(sess.stats, r.Stats) })
	c.mu.Lock()
	old := c.sess
	c.sess = sess
	c.newRunGeneration()
	c.mu.Unlock()
	if old != nil {
		old.Close()
	}
	c.post(sess)
	return nil
}

// newBackend makes s's backend; when it fails and the fallback (the CPU) is offered, the
// registry's one fallback (backend.FallBack) makes that instead, s says so, and the note why.
func (c *Controller) newBackend(s *engine.Settings) (backend.Backend, string, error) {
	bs := c.Backends()
	be, err := bs.New(s.Backend, s.Threads)
	if err == nil && bs.Offers(s.Backend) {
		return be, bs.Notes[s.Backend], nil // why the CPU runs where Metal was expected; Metal's fallbacks ("" when none)
	}
	if err == nil {
		return be, "", nil
	}
	fbe, ran, note, ok := backend.FallBack(s.Backend, s.Threads, err, bs.New, bs.Offers)
	if !ok {
		return be, "", err
	}
	s.Backend = ran
	return fbe, note, nil
}

// restart makes a new run of sess's page and posts it.
func (c *Controller) restart(sess *session) error {
	if err := sess.Restart(); err != nil {
		return err
	}
	sess.stats, sess.lent = nil, nil
	c.mu.Lock()
	c.newRunGeneration()
	c.mu.Unlock()
	c.post(sess)
	return nil
}

// post publishes an immutable snapshot of sess. Worker goroutine only.
func (c *Controller) post(sess *session) {
	r := sess.Run
	c.mu.Lock()
	snap := &Snapshot{Gen: c.gen, CheckpointDir: sess.Dir, ImagePath: sess.Image, Settings: sess.Settings,
		Config: sess.Checkpoint.Config, Page: sess.Input.Image, Layout: r.Layout, Probes: r.Probes, Next: r.Next(),
		Timings: append([]engine.BlockTiming(nil), r.Timings...), WindowTime: append([]time.Duration(nil), sess.lent...), Stats: append([]probe.PatchStats(nil), sess.stats...),
		Outputs: r.Probes.Outputs(), Embed: r.Embed, Finished: r.Finished(),
		WeightBytes: sess.Checkpoint.VisionBytes()}
	if snap.Finished {
		rep := *sess.Report
		snap.Report = &rep
		snap.Dump, _ = engine.NewDump(r) // nil when outputs were not kept (over the probe budget)
	}
	c.snapshot = snap
	c.mu.Unlock()
	if c.OnSnapshot != nil {
		c.do(func() { c.OnSnapshot(snap) })
	}
}

// stepOnce runs one block, or the merger when the blocks are done; false when nothing is left
// or the step failed.
// stepOnce runs the next block (or the merger) and says so; more says a next step follows
// (Run all, Play): the status then stays busy between blocks instead of going idle.
func (c *Controller) stepOnce(ctx context.Context, more bool) bool {
	sess := c.current()
	if sess == nil || sess.Run.Finished() {
		return false
	}
	depth := sess.Checkpoint.Config.Depth
	i := sess.Run.Next()
	if i < depth {
		c.status(Status{Text: fmt.Sprintf("running block %d (blocks 0-%d)", i, depth-1), Progress: float64(i) / float64(depth), Busy: true})
	} else {
		c.status(Status{Text: "running the merger", Progress: 1, Busy: true})
	}
	c.gate.Hold()
	err := sess.Step(ctx)
	c.gate.Release()
	if err != nil {
		c.stepFailed(err, sess)
		return false
	}
	c.post(sess)
	st := c.doneStatus(sess)
	if more && !sess.Run.Finished() && ctx.Err() == nil && st.Err == nil {
		st.Busy = true // Run all or Play goes on: Cancel stays live between blocks
	}
	c.status(st)
	return true
}

// stepFailed says how far the run got: a cancel is not an error, a failure names the block.
func (c *Controller) stepFailed(err error, sess *session) {
	done, depth := sess.Run.Next(), sess.Checkpoint.Config.Depth
	if errors.Is(err, context.Canceled) {
		c.post(sess)
		c.status(Status{Text: sess.Run.CancelNote(), Progress: float64(done) / float64(depth)})
		return
	}
	what := fmt.Sprintf("block %d", done)
	if done == depth {
		what = "merger"
	}
	c.fail(what, err)
}

func (c *Controller) doneStatus(sess *session) Status {
	depth := sess.Checkpoint.Config.Depth
	run, name := sess.Run, sess.Engine.Backend.Name()
	if nf := run.NonFinite; nf != nil {
		return Status{Text: fmt.Sprintf("%d of %d blocks run: %s", run.Next(), depth, nf), Progress: float64(run.Next()) / float64(depth),
			Err: fmt.Errorf("non-finite values: %s", nf)}
	}
	if run.Finished() {
		// The backend's name carries its threads or device; the rest of Describe is added.
		return Status{Text: fmt.Sprintf("done: %d blocks + merger in %.0f ms on %s, %s, tile %d%s%s", depth, sess.Report.Totals.WallMS,
			name, sess.Settings.Residency, sess.Settings.TileRows, InterventionsSuffix(sess.Settings), noteSuffix(sess.BackendNote, sess.Input.Note)), Progress: 1}
	}
	next := "the merger is next"
	if run.Next() < depth {
		next = fmt.Sprintf("block %d is next", run.Next())
	}
	return Status{Text: fmt.Sprintf("%d of %d blocks run on %s, %s%s%s", run.Next(), depth, name, next, InterventionsSuffix(sess.Settings), noteSuffix(sess.BackendNote, sess.Input.Note)),
		Progress: float64(run.Next()) / float64(depth)}
}

// windowShare bounds the time Run all lends the window between two blocks, as a share of
// the block just run: the window's drawing and probes for the blocks done get at most that,
// then wait (busy marks) while the next block runs, and catch up when the run ends. It is
// what keeps the window's Run all within 1.1x of the CLI's; the time lent is the timings'
// "window" bar. At 5% (of ~2 s blocks at 5,120 patches on 2 cores) the window's span was
// 1.11x the CLI's (median of 8 pairs, 1.01-1.22): the lent time plus what the window's own
// drawing takes from the blocks; 3% leaves the block x head chart to finish after the run
// (2-5 s at 5,120 patches) rather than during it.
const windowShare = 0.03

// runAll steps until the merger has run or the context is cancelled, lending the window a
// share of each block's time between blocks.
func (c *Controller) runAll(ctx context.Context) {
	for {
		began := time.Now()
		if !c.stepOnce(ctx, true) {
			return
		}
		if sess := c.current(); sess != nil && !sess.Run.Finished() && ctx.Err() == nil {
			sess.lendAfter(sess.Run.Next()-1, c.lend(ctx, time.Since(began)))
		}
		if ctx.Err() != nil { // cancelled after a block had finished its own checks: say so
			if sess := c.current(); sess != nil && !sess.Run.Finished() {
				depth := sess.Checkpoint.Config.Depth
				c.status(Status{Text: sess.Run.CancelNote(), Progress: float64(sess.Run.Next()) / float64(depth)})
			}
			return
		}
	}
}

// lend gives the window up to windowShare of worked (the engine's time just spent): time
// for the UI goroutine to take the last snapshot (its panels start their probes then), and
// for the probes to run while the gate is open. It returns the time lent: at most the
// share, less when the window had nothing to do. Worker goroutine, gate not held.
func (c *Controller) lend(ctx context.Context, worked time.Duration) time.Duration {
	budget := time.Duration(windowShare * float64(worked))
	start := time.Now()
	taken := make(chan struct{})
	c.do(func() { close(taken) }) // queued behind the snapshot: when it runs, the panels have it
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case <-taken:
	case <-t.C:
		return time.Since(start)
	case <-ctx.Done():
		return time.Since(start)
	}
	c.gate.Yield(budget - time.Since(start))
	return time.Since(start)
}

// lendAfter records the time lent to the window after block i.
func (s *session) lendAfter(i int, d time.Duration) {
	for len(s.lent) <= i {
		s.lent = append(s.lent, 0)
	}
	s.lent[i] = d
}
