package ui

import (
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/turbospark/inspector/internal/testfixture"
)

// The What if tab end to end on the demo: no intervention moves nothing (every bar 0, the map
// untinted); ablating block 1's heads moves nothing before block 1 and the map opens on
// block 1, tinted; a head sweep fills the block x head matrix and exports it; Apply makes the
// intervention the run's settings.
func TestWhatIfFlow(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	for _, it := range h.in.viewMenu().Items { // Ctrl+6, as the View menu has it
		if it.Label == "What if" {
			it.Action()
		}
	}
	p := h.in.panels.whatIf
	if h.win.Canvas().Focused() != p.ablate {
		t.Error("View > What if does not put the cursor in its first field")
	}
	var got *WhatIfResult
	show := h.in.Ctl.OnWhatIf
	h.in.Ctl.OnWhatIf = func(r *WhatIfResult) { got = r; show(r) }

	p.run()
	h.pump("what if (none)", func() bool { return got != nil })
	if firstMoved(got.Blocks) >= 0 || got.Merger != 0 || !strings.Contains(p.result.Text, "by a single bit") {
		t.Errorf("no intervention: blocks %v merger %g, %q", got.Blocks, got.Merger, p.result.Text)
	}
	if img := p.diffView.OverlayImage(); img == nil || !sameRGBA(img, rgbImage(got.Page.Resized)) {
		t.Error("no intervention: the difference map is tinted")
	}

	got = nil
	p.ablate.SetText("1:*")
	p.run()
	if !p.runBtn.Disabled() {
		t.Error("Run what if stays on while it runs")
	}
	h.pump("what if (ablated)", func() bool { return got != nil })
	if firstMoved(got.Blocks) != 1 || got.Merger == 0 {
		t.Errorf("ablating block 1: blocks %v merger %g", got.Blocks, got.Merger)
	}
	if p.diffOf.SelectedIndex() != 1 || p.curve.Selected() != 1 || !strings.Contains(p.result.Text, "from block 1 on") {
		t.Errorf("the map shows block %d, the bars %d; %q", p.diffOf.SelectedIndex(), p.curve.Selected(), p.result.Text)
	}
	if img := p.diffView.OverlayImage(); img == nil || sameRGBA(img, rgbImage(got.Page.Resized)) {
		t.Error("ablating block 1: block 1's difference map is not tinted")
	}
	// Attention after: block 1's heads are ablated after their attention, so blocks 0 and 1
	// attend as before; block 2's input moved, and so does its map.
	for b, same := range []bool{true, true, false} {
		p.showAttention(b)
		before, after := p.before.OverlayImage(), p.after.OverlayImage()
		if before == nil || after == nil || sameRGBA(before, after) != same {
			t.Errorf("block %d: the attention maps before and after are the same: %v, want %v", b, !same, same)
		}
	}

	var sw *SweepResult
	showSweep := h.in.Ctl.OnSweep
	h.in.Ctl.OnSweep = func(r *SweepResult) { sw = r; showSweep(r) }
	p.runSweep()
	h.pump("head sweep", func() bool { return sw != nil })
	cfg := h.in.Snap.Config
	if len(sw.Rows) != cfg.Depth*cfg.Heads || p.exportBtn.Disabled() {
		t.Fatalf("%d sweep rows, want %d", len(sw.Rows), cfg.Depth*cfg.Heads)
	}
	if p.results.SelectedIndex() != 3 || !strings.Contains(p.result.Text, "from block 1 on") {
		t.Errorf("after the sweep: chart %d shown (want the importance matrix), result %q (want the what-if's)", p.results.SelectedIndex(), p.result.Text)
	}
	moved := 0
	for b := range cfg.Depth {
		for hd := range cfg.Heads {
			if v := p.importance.Value(b, hd); v != 100*sw.Rows[b*cfg.Heads+hd].Merger {
				t.Errorf("matrix (%d, %d) = %g, the row says %g", b, hd, v, 100*sw.Rows[b*cfg.Heads+hd].Merger)
			} else if v > 0 {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Error("no head moved the merger")
	}
	out := filepath.Join(t.TempDir(), "imp.csv")
	if err := h.in.ExportHeadImportanceCSV(out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil || strings.Count(string(data), "\n") != 1+cfg.Depth*cfg.Heads || !strings.HasPrefix(string(data), "block,head,ablate_mode,merger_rel_change,block0_rel_change") {
		t.Errorf("the CSV: %v\n%s", err, data)
	}

	// A head patched from the mirrored page (the same size): nothing moves before its block.
	got = nil
	p.ablate.SetText("")
	p.patch.SetText(mirrored(t) + ":blocks.2.attn.h1@0,0,8,8")
	p.run()
	h.pump("what if (patched head)", func() bool { return got != nil })
	if firstMoved(got.Blocks) != 2 || !strings.Contains(p.result.Text, "patch ") {
		t.Errorf("patching block 2's head 1: blocks %v; %q", got.Blocks, p.result.Text)
	}
	p.patch.SetText("")
	p.ablate.SetText("1:*")

	p.apply()
	h.pump("the run with the ablation", func() bool {
		return h.in.Snap != nil && h.in.Snap.Finished && h.in.Ctl.Settings().Ablate.Heads == "1:*"
	})
}

// mirrored writes the demo photo mirrored left-right (the same page size) and returns its path.
func mirrored(t *testing.T) string {
	t.Helper()
	img := testfixture.ReadPNG(t, demoPhoto)
	b := img.Bounds()
	flip := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			flip.Set(b.Max.X-1-x+b.Min.X, y, img.At(x, y))
		}
	}
	path := filepath.Join(t.TempDir(), "mirrored.png")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := png.Encode(out, flip); err != nil {
		t.Fatal(err)
	}
	return path
}

// The fill buttons: the image map's top 8 patches into "mask patches" and, from the selected
// block, into "mask as keys", as pixel_values rows. Run with the key mask: nothing before the
// block moves, and the intervened run's attention gives those patches exactly 0 from that
// block on (and their share before it).
func TestWhatIfMaskFromMap(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.in.SelectBlock(2)
	h.settle()
	p, lay := h.in.panels.whatIf, h.in.Snap.Layout
	if h.in.panels.image.values == nil {
		t.Fatal("no map on the image")
	}
	top := topK(h.in.maps.opts.withoutQuery(h.in.panels.image.values, true, h.in.Sel.Query), topMasked)
	var rows []string
	for _, r := range mapTopRows(h.in.maps.opts.withoutQuery(h.in.panels.image.values, true, h.in.Sel.Query), lay) {
		rows = append(rows, strconv.Itoa(r))
	}
	for _, i := range top { // the fields name the map's top patches, whatever their order
		if !strings.Contains(","+strings.Join(rows, ",")+",", ","+strconv.Itoa(lay.ProcessorRow(i))+",") {
			t.Fatalf("map patch %d is not among the rows %v", i, rows)
		}
	}
	test.Tap(p.topOcclude)
	test.Tap(p.topKeys)
	if want := "rows:" + strings.Join(rows, ","); p.mask.Text != want || p.maskKeys.Text != want+"@2" {
		t.Fatalf("the fields hold %q and %q, want %q and %q@2", p.mask.Text, p.maskKeys.Text, want, want)
	}
	p.mask.SetText("")
	var got *WhatIfResult
	show := h.in.Ctl.OnWhatIf
	h.in.Ctl.OnWhatIf = func(r *WhatIfResult) { got = r; show(r) }
	p.run()
	h.pump("what if (keys masked)", func() bool { return got != nil })
	if firstMoved(got.Blocks) != 2 || !strings.Contains(p.result.Text, "mask keys") {
		t.Fatalf("keys masked from block 2: blocks %v; %q", got.Blocks, p.result.Text)
	}
	for b := range 4 {
		_, mean, err := got.Probes.QueryRows(context.Background(), b, h.in.Sel.Query)
		if err != nil {
			t.Fatal(err)
		}
		var share float32
		for _, i := range top {
			share += mean[i]
		}
		if b >= 2 && share != 0 || b < 2 && share == 0 {
			t.Errorf("block %d: the masked patches hold %g of the query's attention", b, share)
		}
	}
}

// Dropping tokens in What if: nothing moves up to the drop's block, the summary says how many
// patches the later blocks ran, the later difference maps leave the dropped patches
// uncoloured (NaN) and colour the kept; applied, a dropped query's map at a later block says
// it was dropped instead of drawing.
func TestWhatIfKeepTop(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	p := h.in.panels.whatIf
	var got *WhatIfResult
	show := h.in.Ctl.OnWhatIf
	h.in.Ctl.OnWhatIf = func(r *WhatIfResult) { got = r; show(r) }
	p.keepTop.SetText("30@1")
	p.run()
	h.pump("what if (tokens dropped)", func() bool { return got != nil })
	if firstMoved(got.Blocks) != 2 || !strings.Contains(p.result.Text, "ran on 120 of 504 patches") {
		t.Fatalf("30 tokens kept after block 1: blocks %v; %q", got.Blocks, p.result.Text)
	}
	var nan, kept int
	for _, d := range got.PatchDiffs[2] {
		if d != d {
			nan++
		} else {
			kept++
		}
	}
	if nan != 504-120 || kept != 120 {
		t.Errorf("block 2's difference map: %d patches uncoloured, %d coloured; want 384 and 120", nan, kept)
	}
	p.diffOf.SetSelectedIndex(2)
	ticks, caption := p.diffKey.Labels()
	if img := p.diffView.OverlayImage(); img == nil || sameRGBA(img, rgbImage(got.Page.Resized)) || strings.Contains(caption+ticks[2], "NaN") {
		t.Errorf("block 2's difference map is not tinted, or its scale is NaN: %q %q", caption, ticks)
	}
	p.apply()
	h.pump("the run with the drop", func() bool {
		return h.in.Snap != nil && h.in.Snap.Finished && h.in.Ctl.Settings().KeepTop.Spec() == "30@1"
	})
	dropped := -1
	for r := range h.in.Snap.Layout.Rows() {
		if h.in.Snap.Probes.Dropped(2, r) {
			dropped = r
			break
		}
	}
	h.in.SelectBlock(2)
	h.in.SelectQuery(dropped)
	h.settle()
	if !strings.Contains(h.in.panels.image.caption.Text+h.in.panels.attention.topk.Text, "dropped after block 1") {
		t.Errorf("a dropped query at block 2: caption %q, list %q", h.in.panels.image.caption.Text, h.in.panels.attention.topk.Text)
	}
}

// A drag over the image, while What if is shown, writes the rectangle of patches it spans into
// the mask the radio names (as keys: from the selected block); on another tab a drag writes
// nothing.
func TestWhatIfDragMask(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.show("What if")
	p, v, lay := h.in.panels.whatIf, h.in.panels.image.view, h.in.Snap.Layout
	at := func(row, col int) fyne.Position { // a position over the patch at (row, col) of the image
		want := lay.Index(0, 0, row, col)
		for y := float32(0); y < v.Size().Height; y++ {
			for x := float32(0); x < v.Size().Width; x++ {
				if pos := fyne.NewPos(x, y); v.PatchAt(pos) == want {
					return pos.AddXY(1, 1)
				}
			}
		}
		t.Fatalf("no position over patch (%d, %d)", row, col)
		return fyne.Position{}
	}
	drag := func(from, to fyne.Position) {
		mid := fyne.NewPos((from.X+to.X)/2, (from.Y+to.Y)/2)
		v.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: mid}, Dragged: fyne.NewDelta(mid.X-from.X, mid.Y-from.Y)})
		v.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: to}, Dragged: fyne.NewDelta(to.X-mid.X, to.Y-mid.Y)})
		v.DragEnd()
	}
	drag(at(5, 7), at(2, 3)) // drawn up and to the left: the same rectangle
	if p.mask.Text != "3,2,8,6" {
		t.Errorf("mask patches after a drag over rows 2-5, columns 3-7: %q", p.mask.Text)
	}
	h.in.SelectBlock(2)
	p.dragFills.SetSelected(dragMasksKeys)
	drag(at(0, 0), at(1, 1))
	if p.maskKeys.Text != "0,0,2,2@2" {
		t.Errorf("mask as keys after a drag over rows 0-1, columns 0-1 at block 2: %q", p.maskKeys.Text)
	}
	h.show("Attention")
	p.maskKeys.SetText("")
	drag(at(0, 0), at(3, 3))
	if p.maskKeys.Text != "" {
		t.Errorf("a drag on the Attention tab wrote %q", p.maskKeys.Text)
	}
}
