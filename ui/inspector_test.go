package ui

// inspector_test.go: the window end to end on the demo, headless — a run fills every panel,
// a click picks the query, heads, steps, Compare, Apply, the backends offered, exports, the
// head statistics, recent files, rollout, the probe budget, Play, the layout at laptop size,
// and tabs drawn when shown. The harness is harness_test.go's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/ui/control"
)

// Load -> every block runs -> the strip, image and panels show the last block.
func TestOpenRunsTheDemo(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	s := h.in.Snap
	if s.Next != s.Config.Depth || len(s.Stats) != s.Config.Depth || s.Report == nil {
		t.Fatalf("after open: next %d of %d, %d stats, report %v", s.Next, s.Config.Depth, len(s.Stats), s.Report != nil)
	}
	if h.in.Sel.Block != s.Config.Depth-1 {
		t.Errorf("selected block %d, want the last (%d)", h.in.Sel.Block, s.Config.Depth-1)
	}
	if h.in.panels.image.values == nil {
		t.Error("no overlay after the run")
	}
	if !strings.Contains(h.in.panels.toolbar.status.Text, "done") {
		t.Errorf("status %q", h.in.panels.toolbar.status.Text)
	}
	if got := h.in.panels.strip; got == nil {
		t.Fatal("no block strip")
	}
}

// Clicking a patch makes it the query: the overlay is that patch's attention row, and the
// selection box sits on it.
func TestClickSelectsQueryPatch(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	s := h.in.Snap
	target := patchGrid(s).At(3, 20)
	h.tapPatch(target)
	if h.in.Sel.Query != target || h.in.panels.image.view.Selected() != target {
		t.Fatalf("query %d, view selection %d, want %d", h.in.Sel.Query, h.in.panels.image.view.Selected(), target)
	}
	want, err := s.Probes.AttentionRowMean(h.in.Sel.Block, target)
	if err != nil {
		t.Fatal(err)
	}
	if argmax(want) != argmax(h.in.panels.image.values) || len(want) != len(h.in.panels.image.values) {
		t.Error("the overlay is not the clicked patch's mean attention row")
	}
}

// Picking a head shows that head's row; mean of heads is their average.
func TestChangeHead(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	s := h.in.Snap
	q := h.in.Sel.Query
	h.in.panels.attention.head.SetSelected("head 1")
	if h.in.Sel.Head != 1 {
		t.Fatalf("head %d after choosing head 1", h.in.Sel.Head)
	}
	row, _ := s.Probes.AttentionRow(h.in.Sel.Block, 1, q)
	for i := range row {
		if row[i] != h.in.panels.image.values[i] {
			t.Fatalf("overlay[%d] = %v, head 1's row has %v", i, h.in.panels.image.values[i], row[i])
		}
	}
	h.in.panels.attention.head.SetSelected("mean of heads")
	var mean float64
	for hd := 0; hd < s.Config.Heads; hd++ {
		r, _ := s.Probes.AttentionRow(h.in.Sel.Block, hd, q)
		mean += float64(r[q])
	}
	mean /= float64(s.Config.Heads)
	if math.Abs(float64(h.in.panels.image.values[q])-mean) > 1e-6 {
		t.Errorf("mean-of-heads overlay at the query is %v, want %v", h.in.panels.image.values[q], mean)
	}
}

// Step controls: restart, one step, run the rest.
func TestStepControls(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.in.Ctl.Restart()
	h.pump("restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	h.in.Ctl.Step()
	h.pump("one step", func() bool { return h.in.Snap.Next == 1 })
	if h.in.Sel.Block != 0 {
		t.Errorf("after one step the selected block is %d", h.in.Sel.Block)
	}
	h.in.SelectBlock(3) // not run yet: panels say so, nothing breaks
	if !strings.Contains(h.in.panels.image.caption.Text, "not run yet") {
		t.Errorf("caption for an unrun block: %q", h.in.panels.image.caption.Text)
	}
	h.in.Ctl.RunAll()
	h.pump("the rest", func() bool { return h.in.Snap.Finished })
}

// Compare with identical settings, and settings that must not change outputs, shows 0.
func TestCompareIdenticalIsZero(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	p := h.in.panels.compare
	for i, b := range []engine.Settings{h.in.Ctl.Backends().DefaultSettings(), {TileRows: 1, Residency: engine.Pread, Backend: "cpu", Threads: 1}} {
		h.in.runs.compare = nil
		p.b.load(b)
		p.run()
		h.pump("compare", func() bool { return h.in.runs.compare != nil })
		r := h.in.runs.compare
		if maxOf(r.BlockDiff, r.MergerDiff) != 0 || len(r.BlockDiff) != h.in.Snap.Config.Depth {
			t.Errorf("B = %s: diffs %v merger %v, want all 0", b.Describe(), r.BlockDiff, r.MergerDiff)
		}
		if !strings.Contains(p.result.Text, "identical outputs") || !strings.Contains(p.table.Text, "block") {
			t.Errorf("result %q", p.result.Text)
		}
		if i == 0 && !strings.Contains(p.result.Text, "no difference (identical settings") {
			t.Errorf("identical settings: %q", p.result.Text)
		}
		if img := p.diffView.OverlayImage(); img == nil || !sameRGBA(img, rgbImage(r.Page.Resized)) || !strings.Contains(p.diffCaption, "identical") {
			t.Errorf("the difference map of identical outputs is tinted, or not the photo (caption %q)", p.diffCaption)
		}
	}
}

// Applying a setting re-runs from block 0 and says why.
func TestApplySettingsReruns(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	gen := h.in.Snap.Gen
	h.in.panels.settings.form.tile.SetText("64")
	h.in.panels.settings.form.residency.SetSelected("pread")
	h.in.panels.settings.apply()
	h.pump("the re-run", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Finished })
	if !h.said(fmt.Sprintf("tile %d → 64", engine.DefaultTileRows), "residency mapped → pread", "re-running from block 0", "outputs do not") {
		t.Errorf("no status line explained the re-run: %q", h.statuses)
	}
	if h.in.Snap.Settings.TileRows != 64 || h.in.Snap.Settings.Residency != engine.Pread {
		t.Errorf("settings %s after applying tile 64, pread", h.in.Snap.Settings.Describe())
	}
	h.show("Settings")
	if st := h.in.panels.settings.state.Text; !strings.Contains(st, "read by pread") || strings.Contains(st, " 0 B read") {
		t.Errorf("settings state after a pread run: %q", st)
	}
	h.in.panels.settings.form.tile.SetText("zero")
	h.in.panels.settings.apply()
	if !strings.Contains(h.in.panels.toolbar.status.Text, "MLP tile rows") {
		t.Errorf("bad tile entry: status %q", h.in.panels.toolbar.status.Text)
	}
}

// Only the backends that run here are offered; the others are named with the reason.
func TestBackendsOffered(t *testing.T) {
	b := cpuOnly
	b.Unavailable = map[string]string{"metal": "needs macOS on Apple silicon"}
	h := newHarnessOn(t, b)
	h.openDemo()
	form := h.in.panels.settings.form
	if got := form.backend.Options; len(got) != 1 || got[0] != "cpu" {
		t.Errorf("the backend control offers %v, want only cpu", got)
	}
	form.backend.SetSelected("metal") // not an option: the control keeps cpu
	if s, err := form.Settings(); err != nil || s.Backend != "cpu" {
		t.Errorf("settings %+v, %v after selecting an unoffered backend", s, err)
	}
	if !strings.Contains(form.why.Text, "metal is not offered: needs macOS on Apple silicon") {
		t.Errorf("the settings do not say why Metal is not offered: %q", form.why.Text)
	}
}

// Where the default backend fails to start, the run falls back to the CPU and says why.
func TestBackendFallsBackToCPU(t *testing.T) {
	b := cpuOnly
	newCPU := b.New
	b.Names = []string{"metal", "cpu"}
	b.New = func(name string, threads int) (backend.Backend, error) {
		if name == "metal" {
			return nil, errors.New("the GPU is busy")
		}
		return newCPU(name, threads)
	}
	h := newHarnessOn(t, b)
	if a, c := b.ComparePair(); a.Backend != "cpu" || c.Backend != "metal" {
		t.Errorf("Compare starts with %s vs %s, want cpu vs metal", a.Backend, c.Backend)
	}
	h.openDemo()
	if h.in.Snap.Settings.Backend != "cpu" || h.in.panels.settings.form.backend.Selected != "cpu" {
		t.Errorf("after Metal failed: settings say %q, the form %q; want cpu", h.in.Snap.Settings.Backend, h.in.panels.settings.form.backend.Selected)
	}
	if !h.said("done", "metal failed (the GPU is busy): running on the CPU") {
		t.Errorf("no status said the run fell back to the CPU: %q", h.statuses)
	}
}

// A bad image keeps the app running with the error in the status line.
func TestBadImageKeepsRunning(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	bad := filepath.Join(t.TempDir(), "broken.png")
	os.WriteFile(bad, []byte("not a png"), 0o644)
	h.in.OpenFiles(demoDir, bad)
	h.pump("the error", func() bool { return h.in.panels.toolbar.last.Err != nil })
	if !strings.Contains(h.in.panels.toolbar.status.Text, "broken.png") {
		t.Errorf("status %q does not name the file", h.in.panels.toolbar.status.Text)
	}
	if !h.in.Snap.Finished {
		t.Error("the previous run was lost")
	}
}

// Exports: PNG of the view, timings as JSON and CSV, the dump.
func TestExports(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.in.ExportFigure(filepath.Join(dir, "v.png")))
	must(h.in.ExportTimingsJSON(filepath.Join(dir, "t.json")))
	must(h.in.ExportTimingsCSV(filepath.Join(dir, "t.csv")))
	must(h.in.ExportDump(filepath.Join(dir, "d.safetensors")))
	var rep engine.Report
	b, _ := os.ReadFile(filepath.Join(dir, "t.json"))
	must(json.Unmarshal(b, &rep))
	if len(rep.Blocks) != h.in.Snap.Config.Depth {
		t.Errorf("json has %d blocks", len(rep.Blocks))
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "t.csv"))
	if n := strings.Count(string(csv), "\n"); n != h.in.Snap.Config.Depth+1 {
		t.Errorf("csv has %d lines", n)
	}
	f, err := safetensors.Open(filepath.Join(dir, "d.safetensors"))
	must(err)
	if _, ok := f.Tensors["blocks.0.attn_row"]; !ok {
		t.Error("dump lacks attention rows")
	}
	if st, _ := os.Stat(filepath.Join(dir, "v.png")); st == nil || st.Size() < 1000 {
		t.Error("PNG export is empty")
	}
}

// The demo's heads are built to look near (head 1) and far (head 2): after a click, the
// brightest patch of the drawn heatmap must be next to the click for head 1 and across the
// image for head 2 (assets/DEMO.md).
func TestDemoHeatmapsMeanSomething(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	s := h.in.Snap
	click := patchGrid(s).At(4, 6)
	h.tapPatch(click)
	dist := func(a, b int) float64 {
		pa, pb := s.Layout.Pos[a], s.Layout.Pos[b]
		return math.Hypot(float64(pa.Row-pb.Row), float64(pa.Col-pb.Col))
	}
	h.in.SelectBlock(1)
	h.in.panels.attention.head.SetSelected("head 1")
	h.settle()
	if d := dist(argmax(h.in.panels.image.values), click); d > 1.5 {
		t.Errorf("near head: brightest patch %.1f patches from the click", d)
	}
	h.in.panels.attention.head.SetSelected("head 2")
	h.settle()
	if d := dist(argmax(h.in.panels.image.values), click); d < 15 {
		t.Errorf("far head: brightest patch only %.1f patches from the click", d)
	}
}

// The block x head chart holds every block's mean attention distance, computed once per
// block as blocks arrive; the demo's far head sits above its near head in every block.
func TestHeadStatsChart(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	depth := h.in.Snap.Config.Depth
	h.pump("head statistics", func() bool { return len(h.headStats().Dist) == depth && !h.in.maps.rows.MeasuringHeads() })
	a := h.headStats() // what the chart draws
	for b := 0; b < depth; b++ {
		dist, ent, err := h.in.Snap.Probes.HeadStats(context.Background(), b, control.HeadStatQueries)
		if err != nil {
			t.Fatal(err)
		}
		for hd := range dist {
			if a.Dist[b][hd] != dist[hd] || a.Entropy[b][hd] != ent[hd] {
				t.Fatalf("block %d head %d: chart %v/%v, engine %v/%v", b, hd, a.Dist[b][hd], a.Entropy[b][hd], dist[hd], ent[hd])
			}
		}
		if a.Dist[b][2] < 5*a.Dist[b][1] {
			t.Errorf("block %d: far head distance %.1f, near head %.1f", b, a.Dist[b][2], a.Dist[b][1])
		}
	}
}

// Dropping a folder and an image opens them; recent files remember both, newest first.
func TestDropAndRecent(t *testing.T) {
	h := newHarness(t)
	dir, _ := filepath.Abs(demoDir)
	photo, _ := filepath.Abs(demoPhoto)
	h.in.dropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(dir), storage.NewFileURI(photo)})
	h.pump("the dropped run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	if h.in.Snap.CheckpointDir != dir || h.in.Snap.ImagePath != photo {
		t.Errorf("opened %s + %s", h.in.Snap.CheckpointDir, h.in.Snap.ImagePath)
	}
	if got := recentList(h.in.memory.prefs, recentCheckpoints); len(got) != 1 || got[0] != dir {
		t.Errorf("recent checkpoints %v", got)
	}
	for i := 0; i < recentMax+3; i++ {
		rememberRecent(h.in.memory.prefs, recentImages, fmt.Sprintf("/img/%d.png", i))
	}
	rememberRecent(h.in.memory.prefs, recentImages, "/img/3.png")
	got := recentList(h.in.memory.prefs, recentImages)
	if len(got) != recentMax || got[0] != "/img/3.png" || got[1] != fmt.Sprintf("/img/%d.png", recentMax+2) {
		t.Errorf("recent images %v", got)
	}
	for i, x := range got {
		for _, y := range got[i+1:] {
			if x == y {
				t.Errorf("duplicate %s in %v", x, got)
			}
		}
	}
}

// The rollout overlay is computed off the UI goroutine and then drawn: it equals the
// engine's rollout for the selected query and block.
func TestRolloutOverlay(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.in.SelectBlock(2)
	h.in.SetOverlay(OverlayRollout)
	if !strings.Contains(h.in.panels.image.caption.Text, "building the rollout table") {
		t.Errorf("caption while the table is built: %q", h.in.panels.image.caption.Text)
	}
	h.pump("the rollout", func() bool { return rolloutShown(h.in.panels.image) })
	want, err := h.in.Snap.Probes.Rollout(context.Background(), h.in.Sel.Query, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(h.in.panels.image.values, want, 1e-5) {
		t.Fatal("the overlay is not the engine's rollout of the query")
	}
	// Once the table is built, another query's rollout is drawn at once (a row of the table):
	// no background computation, no "computing".
	other := patchGrid(h.in.Snap).At(3, 5)
	h.in.SelectQuery(other)
	if !rolloutShown(h.in.panels.image) {
		t.Fatalf("a click after the table was built: caption %q", h.in.panels.image.caption.Text)
	}
	want, _ = h.in.Snap.Probes.Rollout(context.Background(), other, 2)
	if !closeTo(h.in.panels.image.values, want, 1e-5) {
		t.Error("the clicked query's overlay is not its rollout")
	}
	// The whole-image rollout: a row of its own, not the query's, one per block.
	h.in.SetOverlay(OverlayRolloutWhole)
	h.pump("the whole-image rollout", func() bool { return rolloutShown(h.in.panels.image) })
	w := slices.Clone(h.in.panels.image.values)
	if closeTo(w, want, 1e-3) || !strings.Contains(h.in.panels.image.caption.Text, "whole-image") {
		t.Errorf("whole-image rollout: %q, equal to the query's: %v", h.in.panels.image.caption.Text, closeTo(w, want, 1e-3))
	}
	var sum float64
	for _, x := range w {
		sum += float64(x)
	}
	if math.Abs(sum-1) > 1e-3 { // the demo's page is one image: its rows each sum to 1, so their mean does
		t.Errorf("the whole-image rollout sums to %v", sum)
	}
}

// A page whose probes would not fit the memory budget runs without them, says so, and the
// panels that need them explain instead of failing.
func TestProbeBudget(t *testing.T) {
	h := newHarness(t)
	h.in.Ctl.ProbeBudget = 1 << 10
	h.openDemo()
	if !h.said("probes are off", "lower max pixels") {
		t.Errorf("no status line about the budget: %q", h.statuses)
	}
	h.in.SetOverlay(OverlayChannel)
	if !strings.Contains(h.in.panels.image.caption.Text, "not kept") {
		t.Errorf("channel overlay caption %q", h.in.panels.image.caption.Text)
	}
	h.show("Activations")
	if !strings.Contains(h.in.panels.activation.summary.Text, "not kept") {
		t.Errorf("activations summary %q", h.in.panels.activation.summary.Text)
	}
	h.in.SetOverlay(OverlayAttention)
	h.settle()
	if h.in.panels.image.values != nil || !strings.Contains(h.in.panels.image.caption.Text, "not kept") {
		t.Errorf("attention overlay without kept attention: caption %q", h.in.panels.image.caption.Text)
	}
	h.in.SetOverlay(OverlayNorm) // per-patch statistics are always there
	if len(h.in.panels.image.values) != h.in.Snap.Layout.Rows() {
		t.Error("no L2 norm map")
	}
}

// Play steps with a pause between blocks; Pause stops it; closing while a Play timer is
// pending neither panics nor hangs.
func TestPlayPauseClose(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.in.Ctl.PlayDelay = 20 * time.Millisecond
	h.in.Ctl.Restart()
	h.pump("restart", func() bool { return h.in.Snap.Next == 0 })
	h.in.panels.toolbar.togglePlay()
	if h.in.panels.toolbar.play.Text != "Pause" {
		t.Errorf("play button says %q while playing", h.in.panels.toolbar.play.Text)
	}
	h.pump("two blocks", func() bool { return h.in.Snap.Next >= 2 })
	h.in.panels.toolbar.togglePlay()
	next := h.in.Snap.Next
	time.Sleep(100 * time.Millisecond)
	h.pump("the block in flight", func() bool { return true })
	if h.in.Snap.Next > next+1 {
		t.Errorf("kept stepping after Pause: %d -> %d", next, h.in.Snap.Next)
	}
	h.in.Ctl.Play()
	h.in.Ctl.Close()
	time.Sleep(60 * time.Millisecond) // a Play timer fires after Close
	h.in.Ctl.Close()                  // twice is fine
}

// With the largest layouts the models have (27 blocks, 16 heads), the window still fits a
// 1440x900 laptop screen: panels scroll or wrap rather than grow it.
func TestWindowFitsALaptop(t *testing.T) {
	cfg := engine.Config{ModelType: "qwen3_vl", Depth: 27, Hidden: 64, Heads: 16, Intermediate: 64, OutHidden: 32,
		InChannels: 3, PatchSize: 16, TemporalPatchSize: 2, MergeSize: 2, NumPositionEmbedding: 2304,
		Deepstack: []int{8, 16, 24}, HiddenAct: "gelu_pytorch_tanh", RopeTheta: 10000}
	dir := t.TempDir()
	if err := synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.in.OpenFiles(dir, demoPhoto)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	h.pump("head statistics", func() bool { return len(h.headStats().Dist) == cfg.Depth })
	for _, tab := range h.in.tabs.Items {
		h.in.tabs.Select(tab)
		if m := h.win.Content().MinSize(); m.Width > 1440 || m.Height > 900 {
			t.Errorf("%s tab: the window needs at least %v", tab.Text, m)
		}
	}
}

// A new Compare marks the table on show as the previous result until its own arrives; the
// progress says which pass runs; the passes and blocks fields are read and checked.
func TestComparePreviousAndProgress(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	p := h.in.panels.compare
	var progress []CompareProgress
	show := h.in.Ctl.OnCompareProgress
	h.in.Ctl.OnCompareProgress = func(cp CompareProgress) { progress = append(progress, cp); show(cp) }
	p.reps.SetText("2")
	p.blocks.SetText("2")
	p.run()
	h.pump("compare", func() bool { return h.in.runs.compare != nil && !p.runBtn.Disabled() })
	r := h.in.runs.compare
	if r.Reps != 2 || r.Blocks != 2 || r.Merger || len(r.A.Passes) != 2 || !strings.Contains(p.table.Text, "over 2 pairs") {
		t.Fatalf("passes 2, blocks 2: reps %d, blocks %d, merger %v\n%s", r.Reps, r.Blocks, r.Merger, p.table.Text)
	}
	sawWarmup, sawPass2 := false, false
	for _, cp := range progress {
		sawWarmup = sawWarmup || (cp.Running && cp.Rep == -1 && cp.Blocks > 0)
		sawPass2 = sawPass2 || (cp.Running && cp.Rep == 1 && cp.Reps == 2)
	}
	if !sawWarmup || !sawPass2 {
		t.Errorf("progress %+v: want the warm-up and pass 2 of 2", progress)
	}
	if !p.stale.Hidden {
		t.Error("a fresh result is marked previous")
	}
	h.in.runs.compare = nil
	p.run()
	if p.stale.Hidden || !strings.Contains(p.stale.Text, "previous result") {
		t.Errorf("while a new Compare runs the old table is not marked: %q", p.stale.Text)
	}
	h.pump("compare", func() bool { return h.in.runs.compare != nil && !p.runBtn.Disabled() })
	if !p.stale.Hidden {
		t.Error("the new result is still marked previous")
	}
	p.reps.SetText("0")
	p.run()
	if !strings.Contains(p.result.Text, "passes \"0\"") {
		t.Errorf("passes 0: %q", p.result.Text)
	}
}

// The last Compare exports as JSON with every pass of both sides.
func TestExportCompareJSON(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	path := filepath.Join(t.TempDir(), "compare.json")
	if err := h.in.ExportCompareJSON(path); err == nil {
		t.Error("an export before any Compare succeeded")
	}
	h.in.panels.compare.reps.SetText("2")
	h.in.panels.compare.run()
	h.pump("compare", func() bool { return h.in.runs.compare != nil && !h.in.panels.compare.runBtn.Disabled() })
	if err := h.in.ExportCompareJSON(path); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Comparison struct {
			A struct {
				Passes []struct {
					BlockS []float64 `json:"block_s"`
				} `json:"passes"`
			}
			Verdict  string   `json:"verdict"`
			RatioLow *float64 `json:"ratio_low"`
		} `json:"comparison"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &got); err != nil || len(got.Comparison.A.Passes) != 2 || len(got.Comparison.A.Passes[0].BlockS) != h.in.Snap.Config.Depth ||
		got.Comparison.Verdict == "" || got.Comparison.RatioLow == nil {
		t.Errorf("%v: %.400s", err, b)
	}
}

// Showing a tab never widens the tabs' pane: its content, once drawn (Settings' tap list is
// filled when shown), fits the width the first tab needed, so the split between the image and
// the tabs stays where it was (at 1280x720 a wider tab pushed it ~85 px left, shrinking the
// image, from the first visit to Settings on). Catches: a tab whose drawn content is wider.
func TestShowingATabKeepsThePaneWidth(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	before := h.in.tabs.MinSize().Width
	for _, it := range h.in.tabs.Items {
		h.show(it.Text)
		if w := h.in.tabs.MinSize().Width; w > before+0.5 {
			t.Errorf("showing %s widened the tabs' pane from %.1f to %.1f", it.Text, before, w)
		}
	}
}

// A hidden tab is not redrawn while the run goes on (its text layout cost the blocks time),
// and is up to date the moment it is shown, by a click or View ▸ its name.
func TestHiddenTabsDrawWhenShown(t *testing.T) {
	h := newHarness(t)
	h.show("Timings")
	h.openDemo()
	h.show("Attention")
	before := h.in.panels.timings.summary.Text
	if want := timingSummary(h.in.Snap, slowestBlock(h.in.Snap.Timings)); before != want {
		t.Fatalf("the shown Timings tab says %q, want %q", before, want)
	}
	gen := h.in.Snap.Gen
	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Gen != gen })
	h.in.Ctl.RunAll()
	h.pump("run all", func() bool { return h.in.Snap.Finished })
	if got := h.in.panels.timings.summary.Text; got != before {
		t.Errorf("the hidden Timings tab was redrawn during the run: %q", got)
	}
	h.show("Timings")
	if got, want := h.in.panels.timings.summary.Text, timingSummary(h.in.Snap, slowestBlock(h.in.Snap.Timings)); got != want || got == before {
		t.Errorf("the Timings tab shown after the run says %q, want %q (before: %q)", got, want, before)
	}
	h.in.tabs.SelectIndex(3) // View ▸ Settings does this
	if st := h.in.panels.settings.state.Text; !strings.Contains(st, fmt.Sprintf("%d of %d blocks", h.in.Snap.Next, h.in.Snap.Config.Depth)) {
		t.Errorf("the Settings tab shown after the run says %q", st)
	}
}
