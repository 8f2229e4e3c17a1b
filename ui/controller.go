// Package ui is the inspector's window: a controller that drives the engine off the UI
// goroutine, and the panels that show what it finds. No model math here (engine does it),
// and no import of fyne's app package, so everything runs headless under fyne/test.
//
// controller.go: invariant — engine work (open, step, compare) runs on one worker
// goroutine, one job at a time, and every widget change it causes goes through the do
// function (fyne.Do in the app), always with an immutable Snapshot. The mutation that would
// silently break it: handing the UI the live *engine.Run (its slices, its backend) instead
// of a snapshot — the worker's next append would race the UI's read. The UI gets the run's
// probe.Store (made for concurrent reads) and, once finished, its immutable engine.Dump.
package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/internal/par"
)

// Snapshot is the state the UI draws: everything in it is immutable once posted.
type Snapshot struct {
	Gen           int // bumps on every new session (open, settings change, restart)
	CheckpointDir string
	ImagePath     string
	Settings      engine.Settings
	Config        engine.Config
	Page          *imageproc.Page
	Layout        *geom.Layout
	Probes        *probe.Store // the kept taps (q|k and outputs, and more on request): attention rows, rollout, statistics
	Next          int          // blocks run so far
	Timings       []engine.BlockTiming
	WindowTime    []time.Duration // per block: the time Run all lent the window's probes after it (0 when none)
	Stats         []probe.PatchStats
	Outputs       [][]float32
	Embed         []float32
	Finished      bool // merger done
	Report        *engine.Report
	Dump          *engine.Dump // the finished run's tensors (nil before the merger ran)
	WeightBytes   int64
}

// Loaded says whether a run exists to draw.
func (s *Snapshot) Loaded() bool { return s != nil && s.Probes != nil }

// Status is the line under the toolbar.
type Status struct {
	Text     string
	Progress float64 // 0..1
	Busy     bool    // a job is running: cancel is live
	Err      error
}

// CompareResult is the same image measured under two settings (engine.CompareSessions: a
// warm-up pass each, then the sides interleaved over the repetitions), on the page it ran.
type CompareResult struct {
	*engine.Comparison
	Layout *geom.Layout
	Page   *imageproc.Page
}

// Controller owns the engine session and runs its work on a worker goroutine.
type Controller struct {
	toUI     func(func()) // runs a func on the UI goroutine (fyne.Do)
	quitting atomic.Bool  // set by WindowClosed or Close: nothing more goes to the UI
	backends Backends
	// gate is held while the engine works on the worker (a block, a Compare): the window's
	// probes run under it (ProbeContext) and start no task meanwhile, so a block's time is
	// its own. Run all lends them a share of each block's time (lend).
	gate *par.Gate

	jobs      chan func()
	closeOnce sync.Once // Close's work runs once, whoever calls it and however many at a time

	mu          sync.Mutex
	gen         int
	sess        *session
	cancel      context.CancelFunc // the main run's job in flight
	stepCtx     context.Context    // the Steps' shared context while only Steps are queued
	probeCtx    context.Context    // the current run's probes (head stats, rollout): cancelled with the run
	probeEnd    context.CancelFunc
	compareStop context.CancelFunc // the Compare in flight or queued
	whatIfStop  context.CancelFunc // the what-if or head sweep in flight or queued
	note        string             // why the current run re-ran: stays on the status line until the next open
	playing     bool
	delay       time.Duration
	snapshot    *Snapshot

	pending atomic.Int32 // jobs queued or running
	jobMu   sync.RWMutex // guards closing jobs against late senders
	closed  bool

	// ProbeBudget bounds what a run keeps on the host for the probes (0: half the RAM).
	ProbeBudget int64

	OnSnapshot func(*Snapshot)       // on the UI goroutine
	OnStatus   func(Status)          // on the UI goroutine
	OnCompare  func(*CompareResult)  // on the UI goroutine
	OnBackends func(Backends, error) // on the UI goroutine: after RetryBackends
	// OnCompareProgress follows a Compare: each side's blocks as they finish, and a last
	// call with Running false when it ended (done, failed or cancelled).
	OnCompareProgress func(CompareProgress)
	OnWhatIf          func(*WhatIfResult) // on the UI goroutine
	OnSweep           func(*SweepResult)  // on the UI goroutine
	// OnWhatIfProgress follows a what-if or a head sweep, with a last call with Running
	// false when it ended (done, failed or cancelled).
	OnWhatIfProgress func(WhatIfProgress)
}

// lendAfter records the time lent to the window after block i.
func (s *session) lendAfter(i int, d time.Duration) {
	for len(s.lent) <= i {
		s.lent = append(s.lent, 0)
	}
	s.lent[i] = d
}

// session is the window's engine.Session and the statistics its current run produced.
type session struct {
	*engine.Session
	stats []probe.PatchStats
	lent  []time.Duration // per block: the time Run all lent the window after it
}

// NewController starts the worker. do runs a func on the UI goroutine (fyne.Do); backends
// are what this machine runs.
func NewController(do func(func()), backends Backends) *Controller {
	c := &Controller{toUI: do, backends: backends, jobs: make(chan func(), 64), delay: 400 * time.Millisecond,
		gate: par.NewGate()}
	go func() {
		for j := range c.jobs {
			j()
		}
	}()
	return c
}

// do runs f on the UI goroutine, unless the window is closing: work that ends after Close
// (a job that could not stop in time, a probe) never touches widgets of a closed window.
// The check is made again when f's turn comes: once its loop has ended, fyne runs what was
// still queued on the posting goroutine, off the UI thread.
func (c *Controller) do(f func()) {
	if c.quitting.Load() {
		return
	}
	c.toUI(func() {
		if !c.quitting.Load() {
			f()
		}
	})
}

// WindowClosed stops every UI call from here on; the window calls it from its close
// callback, on the UI goroutine, before fyne's loop ends.
func (c *Controller) WindowClosed() { c.quitting.Store(true) }

// Snapshot is the last posted snapshot (nil before the first open).
func (c *Controller) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshot
}

// Backends are the backends the controller runs on.
func (c *Controller) Backends() Backends {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.backends
}

// RetryBackends asks the backends to probe again what failed (Backends.Retry: Metal after a
// crashed start-up probe), on the worker, after the job in flight; OnBackends then gets the
// new set and the probe's error.
func (c *Controller) RetryBackends() {
	retry := c.Backends().Retry
	if retry == nil {
		return
	}
	c.enqueue(func() {
		nb, err := retry()
		c.mu.Lock()
		c.backends = nb
		c.mu.Unlock()
		c.do(func() {
			if c.OnBackends != nil {
				c.OnBackends(nb, err)
			}
		})
	})
}

// Settings are the current session's (the defaults before the first open).
func (c *Controller) Settings() engine.Settings {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return c.backends.DefaultSettings()
	}
	return c.sess.Settings
}

// enqueue hands a job to the worker; after Close it is dropped (a Play timer may fire late).
// It holds jobMu, never mu: the worker takes mu, so a full queue must not block it.
func (c *Controller) enqueue(j func()) {
	c.jobMu.RLock()
	defer c.jobMu.RUnlock()
	if !c.closed {
		c.pending.Add(1)
		c.jobs <- func() { defer c.pending.Add(-1); j() }
	}
}

func (c *Controller) status(s Status) {
	c.mu.Lock()
	note := c.note
	c.mu.Unlock()
	if note != "" && s.Err == nil {
		s.Text += " · " + note
	}
	if c.OnStatus != nil {
		c.do(func() { c.OnStatus(s) })
	}
}

func (c *Controller) fail(what string, err error) {
	c.status(Status{Text: what + ": " + err.Error(), Err: err})
}

// newContext cancels any job in flight and returns the context of the next one.
func (c *Controller) newContext() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	c.stepCtx = nil
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	return ctx
}

// Cancel stops the job in flight at the next op boundary, a Compare in flight or queued,
// and playing.
func (c *Controller) Cancel() {
	c.mu.Lock()
	c.playing = false
	if c.cancel != nil {
		c.cancel()
	}
	if c.compareStop != nil {
		c.compareStop()
	}
	if c.whatIfStop != nil {
		c.whatIfStop()
	}
	c.mu.Unlock()
}

// ProbeContext is the context of the current run's probes (head statistics, rollout, ...):
// it is cancelled when that run is replaced (open, apply, restart) or the window closes,
// and it carries the controller's gate: the probes' loops start no task while the engine
// works (internal/par/gate.go).
func (c *Controller) ProbeContext() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probeCtx == nil {
		return context.Background()
	}
	return c.probeCtx
}

// newRunGeneration starts a new run generation: the probes of the previous one are
// cancelled. Callers hold mu.
func (c *Controller) newRunGeneration() {
	c.gen++
	if c.probeEnd != nil {
		c.probeEnd()
	}
	ctx, end := context.WithCancel(context.Background())
	c.probeCtx, c.probeEnd = par.WithGate(ctx, c.gate), end
}

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
	msg := changeMessage(sess.Settings, s)
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

// changeMessage says what a settings change re-runs and why.
func changeMessage(old, s engine.Settings) string {
	var what []string
	if old.TileRows != s.TileRows {
		what = append(what, fmt.Sprintf("tile %d → %d", old.TileRows, s.TileRows))
	}
	if old.Residency != s.Residency {
		what = append(what, fmt.Sprintf("residency %s → %s", old.Residency, s.Residency))
	}
	if old.Backend != s.Backend {
		what = append(what, fmt.Sprintf("backend %s → %s", old.Backend, s.Backend))
	}
	if old.Threads != s.Threads {
		what = append(what, fmt.Sprintf("threads %d → %d", old.Threads, s.Threads))
	}
	if old.MaxPixels != s.MaxPixels {
		what = append(what, fmt.Sprintf("max pixels %d → %d (a new page)", old.MaxPixels, s.MaxPixels))
	}
	if a, b := moreTaps(old), moreTaps(s); a != b {
		what = append(what, fmt.Sprintf("more taps %s → %s", keptNames(a), keptNames(b)))
	}
	interventions := false
	if a, b := interventionsOf(old), interventionsOf(s); a != b {
		what = append(what, fmt.Sprintf("%s → %s", a, b))
		interventions = true
	}
	if len(what) == 0 {
		return "same settings: re-running from block 0"
	}
	why := "every block's timing depends on it; outputs do not"
	switch {
	case interventions:
		why = "what is done to the tower changes"
	case old.MaxPixels != s.MaxPixels || old.Backend != s.Backend:
		why = "the page or the arithmetic changes"
	}
	return fmt.Sprintf("%s: re-running from block 0 (%s)", strings.Join(what, ", "), why)
}

// moreTaps are the taps s keeps beyond what the window always keeps.
func moreTaps(s engine.Settings) engine.TapSet { return s.Keep.Set() &^ engine.ProbeTaps }

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

// Step runs the next block (or the merger after the last).
func (c *Controller) Step() {
	ctx := c.stepContext()
	c.enqueue(func() { c.stepOnce(ctx, false) })
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

// Pause stops playing after the block in flight.
func (c *Controller) Pause() {
	c.mu.Lock()
	c.playing = false
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
	time.AfterFunc(c.delay, func() { c.enqueue(func() { c.playStep(ctx) }) })
}

func (c *Controller) current() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
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
			name, sess.Settings.Residency, sess.Settings.TileRows, interventionsSuffix(sess.Settings), noteSuffix(sess.BackendNote, sess.Input.Note)), Progress: 1}
	}
	next := "the merger is next"
	if run.Next() < depth {
		next = fmt.Sprintf("block %d is next", run.Next())
	}
	return Status{Text: fmt.Sprintf("%d of %d blocks run on %s, %s%s%s", run.Next(), depth, name, next, interventionsSuffix(sess.Settings), noteSuffix(sess.BackendNote, sess.Input.Note)),
		Progress: float64(run.Next()) / float64(depth)}
}

// noteSuffix is the notes the status line keeps while the run is shown: why the backend is not
// the one asked for, what the image is to transformers (a 16-bit gray PNG).
func noteSuffix(notes ...string) string {
	var s string
	for _, n := range notes {
		if n != "" {
			s += " — " + n
		}
	}
	return s
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

func maxOf(xs []float64, more ...float64) float64 {
	m := 0.0
	for _, x := range append(append([]float64(nil), xs...), more...) {
		m = max(m, x)
	}
	return m
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

// Close stops the worker after the job in flight.
func (c *Controller) Close() { c.closeOnce.Do(c.close) }

// close is Close's work, done once: a second Close, even one racing the first, waits for it.
func (c *Controller) close() {
	c.quitting.Store(true)
	c.Cancel()
	c.mu.Lock()
	if c.probeEnd != nil {
		c.probeEnd()
	}
	c.mu.Unlock()
	done := make(chan struct{})
	c.enqueue(func() {
		if s := c.current(); s != nil {
			s.Close()
		}
		close(done)
	})
	select {
	case <-done:
	case <-time.After(closeDeadline):
		// The job in flight did not stop in time (a GPU pass, say): the window closes anyway
		// and the process may exit; the worker closes the session when the job returns.
	}
	c.jobMu.Lock()
	c.closed = true
	close(c.jobs)
	c.jobMu.Unlock()
}

// closeDeadline is how long Close waits for the job in flight to stop.
const closeDeadline = 2 * time.Second

// interventionsSuffix names the run's interventions in the status and the image's caption:
// the run is not the plain tower's.
func interventionsSuffix(s engine.Settings) string {
	out := ""
	for _, iv := range s.Interventions() {
		out += " · " + iv.Name
	}
	return out
}
