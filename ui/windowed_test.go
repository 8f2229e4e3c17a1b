package ui

import (
	"bytes"
	"encoding/csv"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/internal/testfixture"
	"github.com/turbospark/inspector/ui/control"
)

// A tower with window attention (tiny-qwen2.5-vl: blocks 0 and 2 windowed, 1 and 3 whole):
// the strip marks exactly the windowed blocks and its tooltip says so; the attention map of a
// windowed block outlines the query's window (the rectangle of patches its segment covers),
// is zero outside it, and its caption says why; a whole-image block outlines nothing.
func TestWindowedBlocksInTheWindow(t *testing.T) {
	dir := t.TempDir()
	if err := synth.Generate(dir, "tiny-qwen2.5-vl", synth.Options{DType: dtype.F32, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.in.OpenFiles(dir, demoPhoto)
	h.pump("the run to finish", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	h.settle()
	s := h.in.Snap
	for b := range s.Config.Depth {
		want := b == 0 || b == 2
		if h.in.panels.strip.view.Marked(b) != want || s.Layout.Windowed(b) != want {
			t.Errorf("block %d: marked %v, windowed %v; want %v", b, h.in.panels.strip.view.Marked(b), s.Layout.Windowed(b), want)
		}
	}
	if tip := h.in.panels.strip.tooltip(0); !strings.Contains(tip, "within windows") {
		t.Errorf("block 0's tooltip %q does not say it attends within windows", tip)
	}
	q := s.Layout.Rows() / 2
	h.in.SelectQuery(q)
	for _, b := range []int{0, 1} {
		h.in.SelectBlock(b)
		h.settle()
		got := h.in.panels.image.view.Region()
		if b == 1 {
			if !got.Empty() {
				t.Errorf("block 1 (whole image): region %v outlined", got)
			}
			continue
		}
		seg := s.Layout.SegmentOf(0, q)
		want := image.Rectangle{Min: image.Pt(1<<30, 1<<30)}
		for _, p := range s.Layout.Pos[seg.Start:seg.End] {
			want.Min.X, want.Min.Y = min(want.Min.X, p.Col), min(want.Min.Y, p.Row)
			want.Max.X, want.Max.Y = max(want.Max.X, p.Col+1), max(want.Max.Y, p.Row+1)
		}
		if got != want || got.Dx() > 4 || got.Dy() > 4 {
			t.Errorf("block 0: region %v, want the query's window %v (at most 4x4 patches)", got, want)
		}
		vals := h.in.panels.image.values
		g := patchGrid(s)
		for r := range g.Rows {
			for c := range g.Cols {
				if in := image.Pt(c, r).In(want); !in && vals[g.Index(r, c)] != 0 {
					t.Fatalf("block 0: %g at patch (%d, %d), outside the window %v", vals[g.Index(r, c)], r, c, want)
				}
			}
		}
		if !strings.Contains(h.in.panels.image.caption.Text, "within its window") {
			t.Errorf("block 0's caption %q does not say the map is the window's", h.in.panels.image.caption.Text)
		}
	}
}

// Head ablation from the Settings tab: the form takes BLOCK:HEAD pairs and a mode (a bad pair
// is refused naming it), Apply re-runs with them, the status names the intervention, and the
// outputs move from the plain run's (block 0 untouched when block 1 is ablated).
func TestAblationFromSettings(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	p := h.in.panels.settings
	p.form.ablate.SetText("1:9x")
	p.apply()
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, "1:9x") {
		t.Errorf("a bad pair: status %q does not name it", st)
	}
	p.form.ablate.SetText("1:0,1:2")
	p.form.ablateAs.SetSelected("mean")
	p.apply()
	h.pump("the ablated run", func() bool {
		return h.in.Snap != nil && h.in.Snap.Finished && !h.in.Snap.Settings.Ablate.None()
	})
	if a := h.in.Snap.Settings.Ablate; a.Heads != "1:0,1:2" || a.Mode != "mean" {
		t.Fatalf("the run's ablation %+v", a)
	}
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, "ablate 1:0,1:2 (mean)") {
		t.Errorf("status %q does not name the ablation", st)
	}
	h.settle()
	if c := h.in.panels.image.caption.Text; !strings.Contains(c, "ablate 1:0,1:2 (mean)") {
		t.Errorf("the image's caption %q does not name the ablation", c)
	}
	s := h.in.Snap
	o0, err := s.Probes.Output(0)
	if err != nil {
		t.Fatal(err)
	}
	o1, err := s.Probes.Output(1)
	if err != nil {
		t.Fatal(err)
	}
	h.in.panels.settings.form.ablate.SetText("")
	p.apply()
	h.pump("the plain run again", func() bool {
		return h.in.Snap != nil && h.in.Snap.Finished && h.in.Snap.Settings.Ablate.None()
	})
	q0, _ := h.in.Snap.Probes.Output(0)
	q1, _ := h.in.Snap.Probes.Output(1)
	if !numcheck.BitEqual(o0, q0) || numcheck.BitEqual(o1, q1) {
		t.Error("ablating block 1's heads should leave block 0's output and move block 1's")
	}
}

// File > Export > Head statistics as CSV: one row per block and head with the tab's distance
// and entropy, where the block attends, and uniform attention's values over the same queries.
func TestExportHeadStatsCSV(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	path := filepath.Join(t.TempDir(), "stats.csv")
	h.pump("head statistics", func() bool {
		return len(h.headStats().Dist) == h.in.Snap.Config.Depth && !h.in.maps.rows.MeasuringHeads()
	})
	hs := h.headStats() // what the tab's chart draws
	if err := h.in.ExportHeadStatsCSV(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	s := h.in.Snap
	if err != nil || len(recs) != 1+s.Config.Depth*s.Config.Heads || recs[0][3] != "mean_distance_patches" {
		t.Fatalf("%d records (%v)", len(recs), err)
	}
	for _, r := range recs[1:] {
		b, _ := strconv.Atoi(r[0])
		hd, _ := strconv.Atoi(r[1])
		d, _ := strconv.ParseFloat(r[3], 64)
		e, _ := strconv.ParseFloat(r[4], 64)
		ud, _ := strconv.ParseFloat(r[5], 64)
		wd, _ := s.Probes.UniformBaseline(b, control.HeadStatQueries)
		if math.Abs(d-hs.Dist[b][hd]) > 1e-7*hs.Dist[b][hd] || math.Abs(e-hs.Entropy[b][hd]) > 1e-7*hs.Entropy[b][hd] ||
			math.Abs(ud-wd) > 1e-7*wd || r[2] != "image" {
			t.Errorf("row %v: the tab has %g / %g, uniform %g", r, hs.Dist[b][hd], hs.Entropy[b][hd], wd)
		}
	}
	hs.Dist = hs.Dist[:1] // as while the statistics are still being computed
	if err := h.in.ExportHeadStatsCSV(filepath.Join(t.TempDir(), "x.csv")); err == nil || !strings.Contains(err.Error(), "1 of 4 blocks") {
		t.Errorf("export of incomplete statistics: %v", err)
	}
}

// The form's mask: a rectangle of patches, refused when it is not one.
func TestMaskInSettingsForm(t *testing.T) {
	h := newHarness(t)
	f := h.in.panels.settings.form
	f.load(engine.DefaultSettings("cpu"))
	f.mask.SetText("0,0,2,2")
	s, err := f.Settings()
	if err != nil || s.Mask != "rect:0,0,2,2" {
		t.Errorf("mask 0,0,2,2: %q, %v", s.Mask, err)
	}
	f.load(s)
	if f.mask.Text != "0,0,2,2" {
		t.Errorf("the form shows %q for the mask it was loaded with", f.mask.Text)
	}
	f.mask.SetText("1,2")
	if _, err := f.Settings(); err == nil || !strings.Contains(err.Error(), "x0,y0,x1,y1") {
		t.Errorf("mask 1,2: %v", err)
	}
}

// The map-only export: every patch a 16 x 16 block of exactly the colour the colorbar gives
// its value (the legend's colormap and scale), nothing of the photo.
func TestExportMapPNG(t *testing.T) {
	h := hmDemo(t)
	p := h.in.panels.image
	path := filepath.Join(t.TempDir(), "map.png")
	if err := h.in.ExportMapPNG(path); err != nil {
		t.Fatal(err)
	}
	img := testfixture.ReadPNG(t, path)
	g := patchGrid(h.in.Snap)
	if b := img.Bounds(); b.Dx() != g.Cols*mapPixelsPerPatch || b.Dy() != g.Rows*mapPixelsPerPatch {
		t.Fatalf("map %v for %d x %d patches", b, g.Cols, g.Rows)
	}
	checked := 0
	for r := range g.Rows {
		for c := range g.Cols {
			want := p.cm.At(p.scale.Norm(p.values[g.Index(r, c)]))
			if want.A == 0 || g.Index(r, c) == h.in.Sel.Query { // the query patch is left out of the map ("skip query")
				continue
			}
			want.A = 255
			got := color.NRGBAModel.Convert(img.At(c*mapPixelsPerPatch+7, r*mapPixelsPerPatch+9)).(color.NRGBA)
			if got != want {
				t.Fatalf("patch (%d, %d): %v, the colorbar gives %v", r, c, got, want)
			}
			checked++
		}
	}
	if checked < g.Len()/2 {
		t.Errorf("only %d of %d patches coloured", checked, g.Len())
	}
}
