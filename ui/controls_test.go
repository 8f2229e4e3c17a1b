package ui

// controls_test.go: the run controls do what they say. The Apply note leaves the status line
// with its run; the menu's items follow what they can do; the demo opens; the colormap and
// the rollout are named. (Cancel, Step and Run all's statuses: ui/control/run_test.go.)

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/control/controltest"
)

func TestApplyNoteLeavesWithItsRun(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	gen := h.in.Snap.Gen
	h.in.panels.settings.form.tile.SetText("64")
	h.in.panels.settings.apply()
	h.pump("the re-run", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Finished })
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, fmt.Sprintf("tile %d → 64", engine.DefaultTileRows)) {
		t.Errorf("the re-run's last status %q does not say why it re-ran", st)
	}
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 })
	h.in.Ctl.Step()
	h.pump("a step", func() bool { return h.in.Snap.Next == 1 })
	if st := h.in.panels.toolbar.status.Text; strings.Contains(st, fmt.Sprintf("tile %d → 64", engine.DefaultTileRows)) {
		t.Errorf("a later status carries the Apply note: %q", st)
	}
}

// The Run items are on only when they can act, as the toolbar's buttons are; the exports are
// on once there is something to export.
func TestMenuItemsFollowWhatTheyCanDo(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(40*time.Millisecond, "", -1))
	h.in.MainMenu()
	on := func(menu int, label string) bool {
		t.Helper()
		it := findItem(h.in.chrome.menu.main.Items[menu], label)
		if it == nil {
			t.Fatalf("no menu item %q", label)
		}
		return !it.Disabled
	}
	export := func(label string) bool {
		t.Helper()
		return !findItem(findItem(h.in.chrome.menu.main.Items[0], "Export").ChildMenu, label).Disabled
	}
	if on(1, "Run all") || on(1, "Restart") || on(1, "Cancel") || export("View as PNG…") || export("Timings as JSON…") {
		t.Error("before anything is open, Run or Export items are on")
	}
	h.in.OpenFiles(demoDir, demoPhoto)
	h.pump("the run under way", func() bool { return h.in.Snap != nil && h.in.Snap.Next >= 1 && !h.in.Snap.Finished })
	if on(1, "Run all") || !on(1, "Cancel") || !export("View as PNG…") || export("Timings as JSON…") || export("Compare as JSON (every pass)…") {
		t.Errorf("during the run: run all %v, cancel %v, view %v, timings %v", on(1, "Run all"), on(1, "Cancel"), export("View as PNG…"), export("Timings as JSON…"))
	}
	h.pump("the run and its last status", func() bool { return h.in.Snap.Finished && h.in.Ctl.Pending() == 0 })
	if on(1, "Run all") || on(1, "Step") || on(1, "Cancel") || !on(1, "Restart") || !export("Timings as JSON…") || !export("Run as safetensors dump…") {
		t.Errorf("after the run: run all %v, step %v, cancel %v, restart %v, timings %v", on(1, "Run all"), on(1, "Step"), on(1, "Cancel"),
			on(1, "Restart"), export("Timings as JSON…"))
	}
	h.in.panels.compare.reps.SetText("1")
	h.in.panels.compare.blocks.SetText("1")
	h.in.panels.compare.run()
	h.pump("compare", func() bool { return h.in.runs.compare != nil && !h.in.panels.compare.runBtn.Disabled() })
	if !export("Compare as JSON (every pass)…") {
		t.Error("after a Compare its export is off")
	}
}

// File ▸ Open the demo gets back to the demo from whatever is open.
func TestOpenTheDemo(t *testing.T) {
	h := newHarness(t)
	h.in.MainMenu()
	other := filepath.Join(t.TempDir(), "other.png")
	raw, err := os.ReadFile(demoPhoto)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(other, raw, 0o644)
	h.in.SetDemo(demoDir, demoPhoto)
	h.in.OpenFiles(demoDir, other)
	h.pump("the other image", func() bool { return h.in.Snap != nil && h.in.Snap.Finished && h.in.Snap.ImagePath == other })
	it := findItem(h.in.chrome.menu.main.Items[0], "Open the demo")
	if it == nil {
		t.Fatal("no File ▸ Open the demo")
	}
	it.Action()
	h.pump("the demo", func() bool { return h.in.Snap.ImagePath == demoPhoto && h.in.Snap.Finished })
}

// The colours menu names the map the overlay is painted with (coolwarm for a signed map on
// ±0), and the rollout's legend says rollout.
func TestColormapAndRolloutNamed(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	p := h.in.panels.image
	p.colors.SetSelected("magma")
	p.diverging.SetChecked(true)
	h.in.SetOverlay(OverlayMean) // signed per-patch means
	if p.cm.String() != "coolwarm" || p.colors.Selected != "coolwarm" {
		t.Errorf("a signed map on ±0: painted with %s, the menu says %s", p.cm, p.colors.Selected)
	}
	p.diverging.SetChecked(false)
	if p.colors.Selected != "magma" || p.cm.String() != "magma" {
		t.Errorf("±0 off: painted with %s, the menu says %s", p.cm, p.colors.Selected)
	}
	h.in.SetOverlay(OverlayRollout)
	h.pump("the rollout", func() bool { return rolloutShown(p) })
	if _, caption := p.legend.Labels(); !strings.Contains(caption, "rollout") {
		t.Errorf("the rollout's legend: %q", caption)
	}
}

// The block x head chart's note gives uniform attention's value on this page, in the metric
// shown.
func TestChartUniformBaseline(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	a := h.in.panels.attention
	h.pump("head statistics", func() bool {
		return len(h.headStats().Dist) == h.in.Snap.Config.Depth && !h.in.maps.rows.MeasuringHeads()
	})
	bd, be := h.in.Snap.Probes.UniformBaseline(h.in.Sel.Block, control.HeadStatQueries)
	a.metric.SetSelected("mean distance")
	if !strings.Contains(a.note.Text, fmt.Sprintf("Uniform attention on this page gives %.2f patches", bd)) {
		t.Errorf("distance: %q", a.note.Text)
	}
	a.metric.SetSelected("entropy")
	if !strings.Contains(a.note.Text, fmt.Sprintf("gives %.3f nats", be)) {
		t.Errorf("entropy: %q", a.note.Text)
	}
}

// The attention matrix opens large: the same cells in a dialog of nearly the window's size.
func TestAttentionMatrixLarge(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	a := h.in.panels.attention
	a.lower.SelectIndex(1)
	h.pump("the matrix", func() bool { return a.mtx.m != nil })
	test.Tap(a.mtx.large)
	v := a.mtx.largeView
	if v == nil || h.in.Win.Canvas().Overlays().Top() == nil {
		t.Fatal("no large view shown")
	}
	if got, want := v.Image().Bounds(), a.mtx.view.Image().Bounds(); got != want {
		t.Errorf("the large view holds %v cells, the tab's %v", got, want)
	}
	if vs, ws := v.Size(), h.in.Win.Canvas().Size(); vs.Width < ws.Width/2 || vs.Height < ws.Height/2 {
		t.Errorf("the large view is %v in a %v window", vs, ws)
	}
}

// Open checkpoint takes a typed path: a folder that is not a checkpoint is said in the dialog
// (which stays); a checkpoint folder opens with the current image.
func TestOpenCheckpointTypedPath(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	second := filepath.Join(t.TempDir(), "ck")
	if err := os.MkdirAll(second, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(demoDir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(demoDir, e.Name()))
		os.WriteFile(filepath.Join(second, e.Name()), b, 0o644)
	}
	h.in.panels.toolbar.chooseCheckpoint()
	entry := h.in.panels.toolbar.checkpointEntry
	entry.SetText(t.TempDir()) // a folder without config.json
	entry.OnSubmitted(entry.Text)
	if h.in.Win.Canvas().Overlays().Top() == nil {
		t.Fatal("the dialog closed on a folder that is not a checkpoint")
	}
	entry.SetText(second)
	entry.OnSubmitted(entry.Text)
	h.pump("the typed checkpoint", func() bool { return h.in.Snap.CheckpointDir == second && h.in.Snap.Finished })
}

// Step stays on while a Step's block runs, each click one more block, the button counts the
// ones waiting ("Step (+2)"), the Run menu's Step likewise; Cancel clears the count.
func TestStepButtonCountsClicks(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(60*time.Millisecond, "", -1))
	h.openDemo()
	h.in.MainMenu()
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Ctl.Pending() == 0 && h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	step, cancel := h.in.panels.toolbar.step, h.in.panels.toolbar.cancel
	test.Tap(step)
	h.pump("the window showing the first block under way", func() bool { return !cancel.Disabled() })
	for range 2 {
		if step.Disabled() {
			t.Fatal("Step is off while a Step's block runs: the click would be lost")
		}
		test.Tap(step)
	}
	if n := h.in.Ctl.QueuedSteps(); n < 1 || step.Text != fmt.Sprintf("Step (+%d)", n) {
		t.Errorf("3 clicks: the button says %q with %d waiting", step.Text, n)
	}
	if it := findItem(h.in.chrome.menu.main.Items[1], "Step"); it == nil || it.Disabled {
		t.Error("the Run menu's Step is off while Steps run")
	}
	h.in.Ctl.Cancel()
	h.pump("the cancel", func() bool { return h.in.Ctl.Pending() == 0 })
	h.settle()
	if step.Text != "Step" || h.in.Snap.Next > 1 {
		t.Errorf("after Cancel: %q, %d blocks ran", step.Text, h.in.Snap.Next)
	}
}
