package control_test

// run_test.go: the controller tells the truth about its runs — a cancel says how far it got
// (also one that lands after a block's last op, or while an activation patch's source image
// runs), Step clicks in a row each step a block, Run all stays busy between blocks, a
// failing run fails alone, probe work ends with its run, and Close keeps its deadline.
// (Moved here from ui's runs_test.go and controls_test.go with the controller.)

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/control/controltest"
)

// Cancel says how far the run got; the status line counts blocks from 0.
func TestCancelSaysHowFar(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(30*time.Millisecond, "", -1))
	h.open(demoDir, demoPhoto)
	h.pump("two blocks", func() bool { return h.snap != nil && h.snap.Next >= 2 })
	h.ctl.Cancel()
	h.pump("the cancel", func() bool { return h.said("cancelled after") })
	if !h.said("running block 0 (blocks 0-") {
		t.Errorf("the status line does not count from 0: %q", h.statuses)
	}
	var line string
	for _, s := range h.statuses {
		if strings.Contains(s, "cancelled after") {
			line = s
		}
	}
	if want := "of " + strconv.Itoa(h.snap.Config.Depth) + " blocks"; !strings.Contains(line, want) {
		t.Errorf("cancel line %q does not say %q", line, want)
	}
}

// The probes' context ends with the run they belong to.
func TestProbeContextEndsWithItsRun(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	ctx := h.ctl.ProbeContext()
	if ctx.Err() != nil {
		t.Fatal("the current run's probe context is already done")
	}
	var done atomic.Bool
	go func() { <-ctx.Done(); done.Store(true) }()
	h.ctl.Restart()
	h.pump("the restart", func() bool { return h.snap.Next == 0 })
	deadline := time.Now().Add(5 * time.Second)
	for !done.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !done.Load() || !errorsIsCanceled(ctx.Err()) {
		t.Errorf("the old run's probe context was not cancelled: %v", ctx.Err())
	}
	if h.ctl.ProbeContext().Err() != nil {
		t.Error("the new run's probe context is done")
	}
}

func errorsIsCanceled(err error) bool { return err == context.Canceled }

// stuckCPU never lets a MatMul end until released (a pass that cannot be interrupted).
type stuckCPU struct {
	*cpu.Backend
	release chan struct{}
	stuck   chan struct{} // gets a value each time a MatMul starts waiting (buffered, never blocks)
}

func (b stuckCPU) wait() {
	select {
	case b.stuck <- struct{}{}:
	default:
	}
	<-b.release
}

func (b stuckCPU) MatMul(y, x backend.View, w, bias backend.Weight, rows, in, out int) {
	b.wait()
	b.Backend.MatMul(y, x, w, bias, rows, in, out)
}

func (b stuckCPU) MatMulEpilogue(y, x backend.View, w, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	b.wait()
	b.Backend.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
}

// Closing the window returns within its deadline even when the job in flight cannot stop.
func TestCloseHasADeadline(t *testing.T) {
	release, stuckNow := make(chan struct{}), make(chan struct{}, 1)
	defer close(release)
	stuck := control.Backends{Names: []string{"cpu"}, New: func(name string, threads int) (backend.Backend, error) {
		return stuckCPU{cpu.New(threads), release, stuckNow}, nil
	}}
	h := newHarnessOn(t, stuck)
	h.open(demoDir, demoPhoto)
	select { // the open job is now stuck in the embedding's MatMul, however slow the machine
	case <-stuckNow:
	case <-time.After(pumpDeadline):
		t.Fatal("the open job never reached a MatMul")
	}
	start := time.Now()
	h.ctl.Close()
	if d := time.Since(start); d > control.CloseDeadline+time.Second {
		t.Errorf("Close took %v", d)
	}
}

// A mapped shard truncated under the window's run (another program rewriting it) fails
// that run with the file's name; the window lives on and opens the next checkpoint.
func TestTruncatedCheckpointFailsOnlyItsRun(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"config.json", "preprocessor_config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(demoDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := filepath.Join(dir, "model.safetensors")
	h := newHarness(t) // mapped residency: the default
	h.open(dir, demoPhoto)
	h.pump("the first run", func() bool { return h.snap != nil && h.snap.Finished })
	h.ctl.Restart()
	h.pump("the restart", func() bool { return h.snap.Next == 0 && !h.snap.Finished })
	h.ctl.Step()
	h.pump("block 0", func() bool { return h.snap.Next == 1 })
	if err := os.Truncate(model, 4096); err != nil {
		t.Fatal(err)
	}
	h.ctl.RunAll()
	h.pump("the failure", func() bool { return h.said("changed while the run had it mapped") })
	if !h.said(model) {
		t.Errorf("the failure does not name %s: %q", model, h.statuses)
	}
	h.openDemo() // the window goes on
}

// Cancel during an Apply whose activation patch runs its source image stops that run (it
// runs while the session opens, before block 0), and says so; the change is named as the
// patch it is, not "same settings".
func TestCancelWhileAPatchSourceRuns(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(400*time.Millisecond, "", -1)) // the source's 4 blocks: seconds
	h.ctl.Open(demoDir, demoPhoto, engine.DefaultSettings("cpu"))
	h.pump("the first run", func() bool { return h.snap != nil && h.snap.Finished })
	s := h.snap.Settings
	s.PatchFrom = demoPhoto + ":blocks.3.out@0,0,4,4"
	h.ctl.Apply(s)
	time.Sleep(time.Second) // inside the source's run
	cancelled := time.Now()
	h.ctl.Cancel()
	h.pump("the cancel", func() bool { return h.said("cancelled before block 0") })
	if took := time.Since(cancelled); took > 2*time.Second {
		t.Errorf("the cancel took %v", took)
	}
	if msg := control.ChangeMessage(h.snap.Settings, s); strings.Contains(msg, "same settings") || !strings.Contains(msg, "patch "+demoPhoto) {
		t.Errorf("the change is said as %q", msg)
	}
}

// cancelAfterDeepstack calls cancel right after the Commit of the first deepstack merger's
// pass has completed (its LayerNorm is the one over the merged width): the block is done
// then, and goes on to host work that checks no context.
type cancelAfterDeepstack struct {
	*cpu.Backend
	merged int
	armed  *atomic.Int32 // 1: the merger's pass is open; 2: cancelled
	cancel func()
}

func (b cancelAfterDeepstack) LayerNorm(out, x backend.View, w, bias backend.Weight, rows, cols int, eps float32) {
	if cols == b.merged {
		b.armed.CompareAndSwap(0, 1)
	}
	b.Backend.LayerNorm(out, x, w, bias, rows, cols, eps)
}

func (b cancelAfterDeepstack) Commit() (time.Duration, error) {
	d, err := b.Backend.Commit()
	if b.armed.CompareAndSwap(1, 2) {
		b.cancel()
	}
	return d, err
}

func TestCancelAfterABlocksLastOpIsSaid(t *testing.T) {
	var armed atomic.Int32
	var h *harness
	bs := control.Backends{Names: []string{"cpu"}, New: func(name string, threads int) (backend.Backend, error) {
		return cancelAfterDeepstack{Backend: cpu.New(threads), merged: 4 * 96, armed: &armed, cancel: func() { h.ctl.Cancel() }}, nil
	}}
	h = newHarnessOn(t, bs)
	h.open(demoDir, demoPhoto)
	h.pump("the cancel", func() bool { return h.said("cancelled after") || (h.snap != nil && h.snap.Finished) })
	if armed.Load() != 2 || h.snap.Next != 2 || !h.said("cancelled after 2 of 4 blocks") {
		t.Errorf("armed %d, next %d, statuses %q", armed.Load(), h.snap.Next, h.statuses)
	}
}

func TestStepClicksEachStepABlock(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(40*time.Millisecond, "", -1))
	h.openDemo()
	h.ctl.Restart()
	h.pump("the restart", func() bool { return h.snap.Next == 0 && !h.snap.Finished })
	for range 3 {
		h.ctl.Step()
		time.Sleep(30 * time.Millisecond) // clicks closer than a block takes
	}
	h.pump("three steps", func() bool { return h.snap.Next >= 3 || h.said("cancelled") })
	h.pump("nothing more", func() bool { return h.ctl.Pending() == 0 })
	if h.snap.Next != 3 || h.said("cancelled") {
		t.Errorf("3 Step clicks ran %d blocks (statuses %q)", h.snap.Next, h.statuses)
	}
}

func TestRunAllStaysBusyBetweenBlocks(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(20*time.Millisecond, "", -1))
	var busy []bool
	var texts []string
	show := h.ctl.OnStatus
	h.ctl.OnStatus = func(s control.Status) { busy, texts = append(busy, s.Busy), append(texts, s.Text); show(s) }
	h.openDemo()
	last := len(busy) - 1
	for i, b := range busy[:last] {
		if !b && !strings.HasPrefix(texts[i], "done") {
			t.Errorf("status %d of the run is idle mid-run: %q", i, texts[i])
		}
	}
	if busy[last] || !strings.HasPrefix(texts[last], "done") {
		t.Errorf("the last status %q busy %v", texts[last], busy[last])
	}
}

// Step clicks are counted while a block runs (QueuedSteps), each runs one block, and Cancel and
// Pause drop the ones not started: nothing runs after them, and the count is 0.
func TestStepClicksQueueAndDrop(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(60*time.Millisecond, "", -1))
	h.openDemo()
	for _, stop := range []struct {
		name string
		f    func()
	}{{"Cancel", h.ctl.Cancel}, {"Pause", h.ctl.Pause}} {
		h.ctl.Restart()
		h.pump("the restart", func() bool { return h.ctl.Pending() == 0 && h.snap.Next == 0 && !h.snap.Finished })
		for range 3 {
			h.ctl.Step()
		}
		if n := h.ctl.QueuedSteps(); n < 2 || !h.ctl.Stepping() {
			t.Fatalf("3 clicks at once: %d waiting (stepping %v), want 2 or 3", n, h.ctl.Stepping())
		}
		h.pump("the first block under way", func() bool { return h.ctl.QueuedSteps() == 2 })
		stop.f()
		if n := h.ctl.QueuedSteps(); n != 0 {
			t.Errorf("%s left %d Steps waiting", stop.name, n)
		}
		h.pump("nothing more", func() bool { return h.ctl.Pending() == 0 })
		if h.snap.Next > 1 || h.ctl.Stepping() {
			t.Errorf("after %s during the first block: %d blocks ran (stepping %v)", stop.name, h.snap.Next, h.ctl.Stepping())
		}
	}
	h.ctl.Restart()
	h.pump("the restart", func() bool { return h.ctl.Pending() == 0 && h.snap.Next == 0 })
	for range 4 {
		h.ctl.Step()
	}
	h.pump("four steps", func() bool { return h.ctl.Pending() == 0 })
	if h.snap.Next != 4 || h.ctl.QueuedSteps() != 0 || h.ctl.Stepping() {
		t.Errorf("4 clicks at once ran %d blocks, %d waiting", h.snap.Next, h.ctl.QueuedSteps())
	}
}

// The window's close is told to the program (OnWindowClosed: app arms quitwatch there), once
// per close, after the controller has marked itself quitting.
func TestWindowClosedTellsTheProgram(t *testing.T) {
	h := newHarness(t)
	told := 0
	h.ctl.OnWindowClosed = func() { told++ }
	h.ctl.WindowClosed()
	if told != 1 {
		t.Errorf("OnWindowClosed called %d times, want 1", told)
	}
}
