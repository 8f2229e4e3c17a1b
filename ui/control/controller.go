package control

// controller.go: the Controller owns the engine session and runs its work on one worker
// goroutine (run.go: open, step, run all, play; compare.go and whatif.go: the jobs beside the
// main run), and posts what the window draws as immutable Snapshots.
//
// Invariant — engine work (open, step, compare) runs on one worker goroutine, one job at a
// time, and every widget change it causes goes through the do function (fyne.Do in the app),
// always with an immutable Snapshot. The mutation that would silently break it: handing the
// UI the live *engine.Run (its slices, its backend) instead of a snapshot — the worker's next
// append would race the UI's read. The UI gets the run's probe.Store (made for concurrent
// reads) and, once finished, its immutable engine.Dump.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turbospark/inspector/engine"
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
	steps       stepQueue // the Step clicks waiting and the one whose block runs (run.go)
	snapshot    *Snapshot

	pending atomic.Int32 // jobs queued or running
	jobMu   sync.RWMutex // guards closing jobs against late senders
	closed  bool

	// ProbeBudget bounds what a run keeps on the host for the probes (0: half the RAM).
	ProbeBudget int64
	// PlayDelay is Play's pause between blocks (400 ms); set it before Play.
	PlayDelay time.Duration

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
	// OnWindowClosed is told when the window closed (WindowClosed, on the UI goroutine): the
	// program's own ending (app: quitwatch.Arm).
	OnWindowClosed func()
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
	c := &Controller{toUI: do, backends: backends, jobs: make(chan func(), 64), PlayDelay: 400 * time.Millisecond,
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
func (c *Controller) WindowClosed() {
	c.quitting.Store(true)
	if c.OnWindowClosed != nil {
		c.OnWindowClosed()
	}
}

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
	c.steps.drop() // another job: the Steps not started go (theirs is the cancelled context)
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	return ctx
}

// Cancel stops the job in flight at the next op boundary, a Compare in flight or queued,
// and playing.
func (c *Controller) Cancel() {
	c.mu.Lock()
	c.playing = false
	c.steps.drop()
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

func (c *Controller) current() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
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
	case <-time.After(CloseDeadline):
		// The job in flight did not stop in time (a GPU pass, say): the window closes anyway
		// and the process may exit; the worker closes the session when the job returns.
	}
	c.jobMu.Lock()
	c.closed = true
	close(c.jobs)
	c.jobMu.Unlock()
}

// CloseDeadline is how long Close waits for the job in flight to stop.
const CloseDeadline = 2 * time.Second

// BeginProbe registers a probe's work with the gate (internal/par/gate.go); end when done.
func (c *Controller) BeginProbe() (end func()) { return c.gate.Begin() }

// Do runs f on the UI goroutine, unless the window is closing (do).
func (c *Controller) Do(f func()) { c.do(f) }

// Gate is held while the engine works on the worker (a block, a Compare): the window's
// probes start no task meanwhile (tests hold it, as a block does).
func (c *Controller) Gate() *par.Gate { return c.gate }

// Pending is the number of jobs queued or running.
func (c *Controller) Pending() int { return int(c.pending.Load()) }

var _ Host = (*Controller)(nil)
