package ui

// runs_test.go: the window tells the truth about runs — timings are the work's own, a
// Compare never stops the main run and shows where two settings differ, a restart clears
// what the panels showed, probes wait while a block runs, nothing reaches a closed window,
// and no export replaces an input. (The controller's own: ui/control/run_test.go.)

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/internal/par"
	"github.com/turbospark/inspector/ui/control/controltest"
)

// Stepping with pauses, then comparing after a pause: no pause lands in a half, a block's
// wall time or a total, in the window's runs and in Compare's.
func TestWindowTimingsHoldNoPause(t *testing.T) {
	const pause = time.Second
	h := newHarness(t)
	h.openDemo()
	began := time.Now()
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	restart := time.Since(began) // the embedding runs here, before the first Step
	// Each recorded time is at most the host-clock time of the Step that did it (from the
	// call to its snapshot): exact on any machine, however slow (qemu runs a block slower
	// than the pause), and a leaked pause makes it longer than its Step.
	var steps []time.Duration
	for !h.in.Snap.Finished {
		time.Sleep(pause)
		next, began := h.in.Snap.Next, time.Now()
		h.in.Ctl.Step()
		h.pump("a step", func() bool { return h.in.Snap.Next > next || h.in.Snap.Finished })
		steps = append(steps, time.Since(began))
	}
	calls := restart
	for _, d := range steps {
		calls += d
	}
	for _, bt := range h.in.Snap.Timings {
		if bt.Block >= len(steps) {
			t.Fatalf("block %d ran without a Step of its own (%d Steps)", bt.Block, len(steps))
		}
		if d := steps[bt.Block]; bt.Attention+bt.MLP > d || bt.Wall > d || bt.Wait > d {
			t.Errorf("block %d: %+v, longer than its Step (%v): it holds a pause", bt.Block, bt, d)
		}
	}
	if w := h.in.Snap.Report.Totals.WallMS; w > ms(calls) {
		t.Errorf("stepped run: total %.3f ms, more than its restart and Steps (%.3f ms): it holds a pause", w, ms(calls))
	}
	if e := h.in.Snap.Report.EmbedMS; e > ms(restart) {
		t.Errorf("the embedding took %.3f ms, more than the restart that ran it (%.3f ms)", e, ms(restart))
	}
	time.Sleep(pause)
	began = time.Now()
	h.in.panels.compare.run()
	h.pump("the compare", func() bool { return h.in.runs.compare != nil })
	took := time.Since(began)
	// Every pass of both sides runs inside the Compare: together they fit in it.
	var sum float64
	for _, side := range []engine.SideTimes{h.in.runs.compare.A, h.in.runs.compare.B} {
		for _, p := range side.Passes {
			sum += 1e3 * p.TotalS
		}
	}
	if sum > ms(took) {
		t.Errorf("compare after a pause: the passes' totals add up to %.3f ms, more than the Compare took (%.3f ms): they hold the pause", sum, ms(took))
	}
}

// A Compare asked for while the main run goes on waits for it: the main run finishes, the
// Compare's button is off while it runs, both sides report their blocks, and the
// difference map puts the difference where it is (one patch nudged on side B).
func TestCompareBesideTheMainRun(t *testing.T) {
	const patch = 37
	h := newHarnessOn(t, controltest.SlowBackends(60*time.Millisecond, "nudged", patch)) // a main run of ~0.5 s: a loaded machine's pauses fit in it
	h.in.panels.compare.reps.SetText("1")
	var progress []CompareProgress
	show := h.in.Ctl.OnCompareProgress
	h.in.Ctl.OnCompareProgress = func(p CompareProgress) { progress = append(progress, p); show(p) }
	h.in.OpenFiles(demoDir, demoPhoto)
	h.pump("the main run started", func() bool { return h.in.Snap != nil && h.in.Snap.Next >= 1 })
	if h.in.Snap.Finished {
		t.Fatal("the main run finished before Compare could be asked for: make the backend slower")
	}
	h.in.panels.compare.b.backend.SetSelected("nudged")
	h.in.panels.compare.run()
	h.pump("the compare", func() bool { return h.in.runs.compare != nil && h.in.panels.compare.runBtn.Disabled() == false })
	if !h.in.Snap.Finished || h.said("cancelled") {
		t.Errorf("the main run did not finish (finished %v, statuses %q)", h.in.Snap.Finished, h.statuses)
	}
	if !h.said("compare queued") {
		t.Errorf("nothing said the compare waits for the run: %q", h.statuses)
	}
	depth := h.in.Snap.Config.Depth
	seen := [2]int{}
	disabledSeen := false
	for _, p := range progress {
		if p.Running {
			seen[p.Side] = max(seen[p.Side], p.Blocks)
			disabledSeen = true
		}
	}
	if seen[0] != depth || seen[1] != depth || !disabledSeen {
		t.Errorf("per-side progress reached %v of %d blocks", seen, depth)
	}
	r := h.in.runs.compare
	last := r.PatchDiffs[len(r.PatchDiffs)-1]
	argmax := 0
	for i, d := range last {
		if d > last[argmax] {
			argmax = i
		}
	}
	if argmax != patch || last[patch] == 0 {
		t.Errorf("the difference map peaks at patch %d (%.3g), the nudged patch is %d (%.3g)", argmax, last[argmax], patch, last[patch])
	}
	if first := r.PatchDiffs[0]; first[patch] < 100*first[(patch+5)%len(first)] {
		t.Errorf("block 0's map: patch %d %.3g, another %.3g (the nudged row must stand out; attention spreads only a little)", patch, first[patch], first[(patch+5)%len(first)])
	}
	if h.in.panels.compare.diffView.OverlayImage() == nil || !strings.Contains(h.in.panels.compare.diffCaption, "up to") {
		t.Errorf("the difference map is not drawn (caption %q)", h.in.panels.compare.diffCaption)
	}
}

// After Restart the Activations tab shows nothing of a block until it runs again.
func TestRestartClearsActivations(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.in.SelectBlock(1)
	h.in.tabs.SelectIndex(1)
	h.in.refresh()
	if len(h.in.panels.activation.top) == 0 {
		t.Fatal("no channels before the restart")
	}
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 })
	h.in.SelectBlock(1)
	h.in.refresh()
	if len(h.in.panels.activation.top) != 0 || !strings.Contains(h.in.panels.activation.summary.Text, "has not run yet") {
		t.Errorf("after restart: %d channels, summary %q", len(h.in.panels.activation.top), h.in.panels.activation.summary.Text)
	}
}

// Run all, Step and Play are offered only while something is left to run.
func TestRunButtonsFollowWhatIsLeft(t *testing.T) {
	h := newHarness(t)
	tb := h.in.panels.toolbar
	if !tb.runAll.Disabled() || !tb.step.Disabled() || !tb.play.Disabled() || !tb.restart.Disabled() {
		t.Error("run buttons are on before anything is open")
	}
	h.openDemo()
	if !tb.runAll.Disabled() || !tb.step.Disabled() || !tb.play.Disabled() || tb.restart.Disabled() {
		t.Error("after the run finished: Run all/Step/Play must be off, Restart on")
	}
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	if tb.runAll.Disabled() || tb.step.Disabled() || tb.play.Disabled() {
		t.Error("after a restart the run buttons are still off")
	}
}

// The timeline exports as Chrome trace-event JSON.
func TestExportTrace(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	path := t.TempDir() + "/run.trace.json"
	if err := h.in.ExportTrace(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"traceEvents"`) || !strings.Contains(string(b), "block 0 attention") {
		t.Errorf("trace export: %v %.200s", err, b)
	}
}

// After the window closes, fyne runs what is still queued for it on the caller's goroutine
// (its loop has ended): work posted before the close must not run then.
func TestNothingReachesAClosedWindow(t *testing.T) {
	h := newHarness(t)
	ran := false
	h.in.Ctl.Do(func() { ran = true }) // queued, not yet run
	h.win.Close()
	for {
		select {
		case f := <-h.ui:
			f()
			continue
		default:
		}
		break
	}
	if ran {
		t.Fatal("a UI call queued before the window closed ran after it")
	}
}

// A bar is the block's wall time, the number the summary and the exports give: its parts
// (wait, attention, MLP, deepstack, host) add up to it, and a deepstack block shows its merger.
func TestTimingBarsAddUpToTheWall(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	if len(timingParts) != len(timingColors) {
		t.Fatalf("%d parts, %d colours", len(timingParts), len(timingColors))
	}
	rows := timingRows(h.in.Snap.Timings)
	for i, bt := range h.in.Snap.Timings {
		sum := 0.0
		for _, v := range rows[i] {
			sum += v
		}
		if math.Abs(sum-ms(bt.Wall)) > 1e-6 {
			t.Errorf("block %d: the bar is %.3f ms, its wall %.3f ms", i, sum, ms(bt.Wall))
		}
		if deep := rows[i][3]; deep != ms(bt.Deepstack) {
			t.Errorf("block %d: deepstack part %.3f ms, timing %.3f ms", i, deep, ms(bt.Deepstack))
		}
	}
	if sum := timingSummary(h.in.Snap, 0); !strings.Contains(sum, "deepstack") || !strings.Contains(sum, "host") {
		t.Errorf("the summary leaves time out: %q", sum)
	}
}

// The window's probes never run inside a block: a probe loop under the run's ProbeContext
// starts no task while a pass is committed, in Run all as in Step, and Run all lends it time
// between blocks (bounded: the probe here never ends), shown as each block's window time,
// outside the block's wall.
func TestProbesWaitWhileABlockRuns(t *testing.T) {
	var inPass atomic.Bool
	h := newHarnessOn(t, Backends{Names: []string{"cpu"}, New: func(_ string, threads int) (backend.Backend, error) {
		return controltest.SlowCPU{Backend: cpu.New(threads), Delay: 30 * time.Millisecond, Nudge: -1, InPass: &inPass}, nil
	}})
	h.openDemo()
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	var tasks, inside atomic.Int64
	probeCtx, stopProbe := context.WithCancel(h.in.Ctl.ProbeContext())
	probed := make(chan error, 1)
	go func() { // a probe that always has work: it runs whenever the gate lets it
		probed <- par.For(probeCtx, math.MaxInt32, 2, func(_, _ int) {
			if inPass.Load() {
				inside.Add(1)
			}
			tasks.Add(1)
			for end := time.Now().Add(50 * time.Microsecond); time.Now().Before(end); {
			}
		})
	}()
	h.in.Ctl.Step()
	h.pump("a step", func() bool { return h.in.Snap.Next == 1 })
	h.in.Ctl.RunAll()
	h.pump("run all", func() bool { return h.in.Snap.Finished })
	stopProbe()
	if err := <-probed; err != context.Canceled {
		t.Fatalf("the probe ended with %v", err)
	}
	// A task that passed the gate just before a block held it may still start inside the
	// block (its goroutine descheduled in between): at most one per probe worker per block
	// (the merger's step included). Without the gate they number thousands.
	steps := int64(h.in.Snap.Config.Depth + 1)
	if n := inside.Load(); n > 2*steps {
		t.Errorf("%d of %d probe tasks started while a block's pass ran (at most %d may have been in flight)", n, tasks.Load(), 2*steps)
	}
	s := h.in.Snap
	var lent, wall time.Duration
	for i, d := range s.WindowTime {
		lent += d
		wall += s.Timings[i].Wall
	}
	if lent <= 0 || len(s.WindowTime) < len(s.Timings)-1 {
		t.Errorf("Run all lent the waiting probe no time: %v", s.WindowTime)
	}
	if s.WindowTime[0] != 0 {
		t.Errorf("block 0 was stepped, not run by Run all, yet it lent %v", s.WindowTime[0])
	}
	if 4*lent > wall {
		t.Errorf("the window was lent %v against %v of blocks: more than its share", lent, wall)
	}
	rows := runRows(s.Timings, s.WindowTime)
	for i, r := range rows {
		if got := r[len(r)-1]; got != ms(s.WindowTime[i]) {
			t.Errorf("block %d: the window part is %.3f ms, lent %v", i, got, s.WindowTime[i])
		}
	}
}

// Run all, Step (with pauses) and Play (with its delay between blocks) time the same block
// alike: no pause before a Step and no Play delay is counted as work. Both waits are 1 s here
// and every recorded time must stay under half of that: a block's work on the demo is a few
// ms plus slowCPU's 50 ms a pass, so a counted wait cannot hide in it, and the bound needs no
// reference run (a ratio to Run all's times failed once on a loaded machine).
func TestRunAllStepPlayTimeAlike(t *testing.T) {
	const wait = time.Second
	h := newHarnessOn(t, controltest.SlowBackends(50*time.Millisecond, "", -1))
	h.in.Ctl.PlayDelay = wait // Play's delay between blocks; read by the worker only after Play
	h.openDemo()
	byMode := map[string][]engine.BlockTiming{"run all": h.in.Snap.Timings}
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	for !h.in.Snap.Finished {
		time.Sleep(wait)
		next := h.in.Snap.Next
		h.in.Ctl.Step()
		h.pump("a step", func() bool { return h.in.Snap.Next > next || h.in.Snap.Finished })
	}
	byMode["step"] = h.in.Snap.Timings
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	began := time.Now()
	h.in.Ctl.Play()
	h.pump("play to the end", func() bool { return h.in.Snap.Finished })
	if d := time.Since(began); d < time.Duration(len(h.in.Snap.Timings)-1)*wait {
		t.Fatalf("play took %v for %d blocks: the delay between them was not %v", d, len(h.in.Snap.Timings), wait)
	}
	byMode["play"] = h.in.Snap.Timings
	for mode, ts := range byMode {
		if len(ts) != len(byMode["run all"]) {
			t.Fatalf("%s: %d blocks, run all %d", mode, len(ts), len(byMode["run all"]))
		}
		for i, bt := range ts {
			for _, half := range []struct {
				name string
				got  time.Duration
			}{{"attention", bt.Attention}, {"MLP", bt.MLP}, {"wall", bt.Wall}} {
				if half.got >= wait/2 || half.got <= 0 {
					t.Errorf("block %d %s: %s %v, want under %v (a pause or delay of %v counted?)", i, half.name, mode, half.got, wait/2, wait)
				}
			}
		}
	}
}

// After an Apply with an activation patch, the patch's source image is an input of the window's
// work like the open image: no export (a figure, timings, a trace, a dump, ...) replaces it.
func TestExportsNeverReplaceThePatchSource(t *testing.T) {
	dir := t.TempDir()
	source := filepath.Join(dir, "source.png")
	raw, err := os.ReadFile(demoPhoto)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(source, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.openDemo()
	s := h.in.Snap.Settings
	s.PatchFrom = source + ":blocks.1.out@0,0,4,4"
	h.in.Ctl.Apply(s)
	h.pump("the patched run", func() bool { return h.in.Snap.Finished && h.in.Snap.Settings.PatchFrom != "" })
	link := filepath.Join(dir, "link.png")
	if err := os.Symlink(source, link); err != nil {
		t.Fatal(err)
	}
	for name, export := range map[string]func(string) error{"figure": h.in.ExportFigure, "timings JSON": h.in.ExportTimingsJSON,
		"timings CSV": h.in.ExportTimingsCSV, "trace": h.in.ExportTrace, "dump": h.in.ExportDump, "map": h.in.ExportMapPNG} {
		for _, path := range []string{source, link} {
			if err := export(path); err == nil || !strings.Contains(err.Error(), "would overwrite an input") {
				t.Errorf("%s over the patch's source (%s): %v", name, filepath.Base(path), err)
			}
		}
	}
	if now, _ := os.ReadFile(source); !bytes.Equal(now, raw) {
		t.Error("the patch's source image changed")
	}
}

// A checkpoint whose values go non-finite: the window's JSON exports (timings, a Compare of one
// pair, the trace) are still JSON, with null where a number is not finite, and the Compare
// says which side went non-finite.
func TestExportsOfANonFiniteRunAreJSON(t *testing.T) {
	dir := t.TempDir()
	if err := synth.WritePoisoned(dir, "tiny", "blocks.1.attn.qkv.bias"); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.in.OpenFiles(dir, demoPhoto)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Report != nil && h.in.Snap.Report.NonFinite != nil })
	p := h.in.panels.compare
	p.reps.SetText("1")
	p.run()
	h.pump("compare", func() bool { return h.in.runs.compare != nil })
	if !strings.Contains(p.table.Text, "side A: values stopped being finite") || !strings.Contains(p.table.Text, "one pair of passes gives no interval") {
		t.Errorf("the Compare table:\n%s", p.table.Text)
	}
	out := t.TempDir()
	for name, export := range map[string]func(string) error{"timings.json": h.in.ExportTimingsJSON, "compare.json": h.in.ExportCompareJSON,
		"trace.json": h.in.ExportTrace} {
		path := filepath.Join(out, name)
		if err := export(path); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		b, _ := os.ReadFile(path)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("%s is not JSON: %v\n%.300s", name, err, b)
		}
	}
}
