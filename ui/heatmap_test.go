package ui

// heatmap_test.go: the image panel's heatmap options on the demo, headless — the query left
// out of the scale and of the top-k lists, a percentile clip, log10, one scale shared by
// every block and head (the head grid too), signed maps centred at 0 on a diverging colormap,
// a constant map named instead of painted, the attention-to column, the rollout's fusion and
// discard, the attention matrix with its zoom, the preferences across a
// relaunch, and a channel entry wide enough for four digits.
//
// Invariant: the overlay, the legend and the head grid are painted with one Scale chosen from
// the options (heatmap.go), and every option changes what it says it changes. The mutations
// each test catches are listed with it.

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/widgets"
)

// hmDemo is the demo, run, showing its last block's mean of heads.
func hmDemo(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.openDemo()
	return h
}

// hmMaxExcept is the largest of xs outside skip.
func hmMaxExcept(xs []float32, skip int) float32 {
	m := float32(math.Inf(-1))
	for i, x := range xs {
		if i != skip {
			m = max(m, x)
		}
	}
	return m
}

// hmPointAt is a point of the image view over patch p.
func hmPointAt(t *testing.T, h *harness, p int) fyne.Position {
	t.Helper()
	v := h.in.panels.image.view
	sz := v.Size()
	for y := float32(1); y < sz.Height; y += 2 {
		for x := float32(1); x < sz.Width; x += 2 {
			if v.PatchAt(fyne.NewPos(x, y)) == p {
				return fyne.NewPos(x, y)
			}
		}
	}
	t.Fatalf("patch %d is not drawn", p)
	return fyne.Position{}
}

// hmPatchPixel is the centre pixel of patch p in img (the resized page's size).
func hmPatchPixel(h *harness, img image.Image, p int) [3]uint32 {
	s := h.in.Snap
	pos, g := s.Layout.Pos[p], s.Layout.Grids[0]
	W, H := img.Bounds().Dx(), img.Bounds().Dy()
	r, gg, b, _ := img.At(pos.Col*W/g.W+W/g.W/2, pos.Row*H/g.H+H/g.H/2).RGBA()
	return [3]uint32{r, gg, b}
}

func hmListed(topk string, p int) bool {
	for _, line := range strings.Split(topk, "\n")[1:] {
		if strings.Contains(line, fmt.Sprintf("patch %4d ", p)) {
			return true
		}
	}
	return false
}

// The query tops its own map on the demo; left out, it leaves the scale, the marks and the
// top-k list, and is drawn uncoloured. Catches: the exclusion ignored by the scale, by the
// marks, by the attention tab's list or by the head grid, and the query still tinted.
func TestHeatmapExcludeQuery(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	p.exclude.SetChecked(false)
	q, vals := in.Sel.Query, p.values
	if argmax(vals) != q {
		t.Fatalf("the demo's query %d does not top its own mean row (top %d): the check is vacuous", q, argmax(vals))
	}
	if p.scale.Hi != vals[q] || !slices.Contains(p.marks(), q) || !hmListed(in.panels.attention.topk.Text, q) {
		t.Fatalf("query kept: scale hi %v (query %v), marks %v, list:\n%s", p.scale.Hi, vals[q], p.marks(), in.panels.attention.topk.Text)
	}
	p.exclude.SetChecked(true)
	if want := hmMaxExcept(vals, q); p.scale.Hi != want {
		t.Errorf("query left out: scale hi %v, want the largest other value %v", p.scale.Hi, want)
	}
	if slices.Contains(p.marks(), q) || len(p.marks()) != 5 {
		t.Errorf("query left out: marks %v", p.marks())
	}
	if hmListed(in.panels.attention.topk.Text, q) || !strings.Contains(in.panels.attention.topk.Text, "left out") {
		t.Errorf("query left out: the top-k list:\n%s", in.panels.attention.topk.Text)
	}
	if _, caption := p.legend.Labels(); !strings.Contains(caption, "query patch excluded") {
		t.Errorf("legend caption %q", caption)
	}
	if got, photo := hmPatchPixel(h, p.view.OverlayImage(), q), hmPatchPixel(h, rgbImage(in.Snap.Page.Resized), q); got != photo {
		t.Errorf("the left-out query is tinted: %v, photo %v", got, photo)
	}
	for hd := range in.Snap.Config.Heads {
		if sc := in.panels.attention.grid.Scale(hd); sc.Excluded == 0 {
			t.Errorf("head %d's thumbnail scale keeps the query", hd)
		}
	}
}

// Clip and log: the scale stops at the percentile (the legend's hi label says "≥"), and log
// puts the geometric middle under the middle tick. Catches: the clip ignored or taken of the
// raw max, the legend labelling the raw range, a log scale the overlay does not use.
func TestHeatmapClipAndLog(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	q := in.Sel.Query
	p.clip.SetSelected("99th pct")
	rest := slices.Delete(slices.Clone(p.values), q, q+1)
	slices.Sort(rest)
	want := rest[int(math.Ceil(0.99*float64(len(rest))))-1]
	if p.scale.Hi != want || p.scale.Lo != 0 {
		t.Errorf("99th percentile: scale [%v, %v], want [0, %v]", p.scale.Lo, p.scale.Hi, want)
	}
	if ticks, caption := p.legend.Labels(); !strings.HasPrefix(ticks[2], "≥") || !strings.Contains(caption, "99th percentile") {
		t.Errorf("clipped legend %q %q", ticks, caption)
	}
	p.logScale.SetChecked(true)
	sc := p.scale
	if !sc.Log || sc.Hi != want {
		t.Fatalf("log: %+v", sc)
	}
	ticks, caption := p.legend.Labels()
	if mid := float32(math.Sqrt(float64(sc.Lo) * float64(sc.Hi))); !strings.Contains(caption, "log10") || !strings.Contains(ticks[1], fmt.Sprint(mid)[:3]) {
		t.Errorf("log legend %q %q, middle %v", ticks, caption, mid)
	}
	// the overlay is painted log10-linearly: a value at the geometric middle gets cm.At(0.5)
	if got := sc.Norm(float32(math.Sqrt(float64(sc.Lo) * float64(sc.Hi)))); math.Abs(got-0.5) > 1e-5 {
		t.Errorf("Norm(geometric middle) = %v", got)
	}
}

// Shared: one scale over every head of every block run, the same when the block changes, and
// the head grid on it too; not shared, each head its own. Catches: a shared scale over the
// shown map alone, the head grid ignoring it, per-head scales kept when shared.
func TestHeatmapSharedScale(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	s, q := in.Snap, in.Sel.Query
	p.shared.SetChecked(true)
	h.settle()
	var want float32
	for b := range s.Next {
		for hd := range s.Config.Heads {
			row, err := s.Probes.AttentionRow(b, hd, q)
			if err != nil {
				t.Fatal(err)
			}
			want = max(want, hmMaxExcept(row, q))
		}
	}
	if p.scale.Hi != want {
		t.Errorf("shared scale hi %v, want the largest over every block and head %v", p.scale.Hi, want)
	}
	if want == hmMaxExcept(p.values, q) {
		t.Fatal("the shown map holds the shared maximum: the check is vacuous")
	}
	for hd := range s.Config.Heads {
		if got := in.panels.attention.grid.Scale(hd); got.Hi != want {
			t.Errorf("head grid h%d: scale hi %v, want the shared %v", hd, got.Hi, want)
		}
	}
	in.SelectBlock(0)
	h.settle()
	if p.scale.Hi != want {
		t.Errorf("block 0: shared scale hi %v, want %v", p.scale.Hi, want)
	}
	if _, caption := p.legend.Labels(); !strings.Contains(caption, "shared by 4 blocks × 4 heads") {
		t.Errorf("legend caption %q", caption)
	}
	p.shared.SetChecked(false)
	h.settle()
	e, _ := in.maps.rows.Wait(s.Probes, 0, q)
	for hd, row := range e.Rows {
		if got := in.panels.attention.grid.Scale(hd); got.Hi != hmMaxExcept(row, q) {
			t.Errorf("own scales: h%d hi %v, want %v", hd, got.Hi, hmMaxExcept(row, q))
		}
	}
}

// A signed channel goes on coolwarm centred at 0, a constant channel is named instead of
// painted. Catches: a diverging scale over [min, max], the option ignored, a constant map
// tinting the image, the legend showing a bar for it.
func TestHeatmapDivergingAndConstant(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	in.SetOverlay(OverlayChannel)
	var lo, hi float32
	for ch := range in.Snap.Config.Hidden { // a signed channel, not symmetric about 0
		in.Sel.Channel = ch
		in.refresh()
		if lo, hi = rangeOf(p.values); lo < 0 && hi > 0 && math.Abs(float64(lo+hi)) > 0.1*float64(hi) {
			break
		}
	}
	if !(lo < 0 && hi > 0) {
		t.Fatal("no signed channel in the demo's last block")
	}
	m := max(-lo, hi)
	if p.cm != widgets.CoolWarm || p.scale.Lo != -m || p.scale.Hi != m {
		t.Errorf("signed map: %v over [%v, %v], want coolwarm over ±%v", p.cm, p.scale.Lo, p.scale.Hi, m)
	}
	if ticks, _ := p.legend.Labels(); ticks[1] != "0" {
		t.Errorf("diverging legend %q: 0 in the middle", ticks)
	}
	p.diverging.SetChecked(false)
	if p.cm != in.Sel.Colors || p.scale.Lo != lo || p.scale.Hi != hi {
		t.Errorf("diverging off: %v over [%v, %v], want %v over [%v, %v]", p.cm, p.scale.Lo, p.scale.Hi, in.Sel.Colors, lo, hi)
	}
	p.diverging.SetChecked(true)
	p.channel.SetText("0")
	p.channel.OnSubmitted("0") // κ = 2 everywhere
	if !p.scale.Constant || !strings.Contains(p.caption.Text, "constant map") || p.legend.BarShown() {
		t.Errorf("constant channel: scale %+v, caption %q, bar %v", p.scale, p.caption.Text, p.legend.BarShown())
	}
	photo := rgbImage(in.Snap.Page.Resized)
	for _, q := range []int{0, 100, 300} {
		if got, want := hmPatchPixel(h, p.view.OverlayImage(), q), hmPatchPixel(h, photo, q); got != want {
			t.Errorf("constant channel: patch %d tinted %v, photo %v", q, got, want)
		}
	}
}

// "attention to" is column query of the attention matrix, computed off the UI goroutine.
// Catches: the row shown instead, a stale column after the head changes.
func TestAttentionToOverlay(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	s := in.Snap
	if !slices.Contains(p.source.Options, OverlayAttentionTo) {
		t.Fatalf("the overlay menu %v lacks %q", p.source.Options, OverlayAttentionTo)
	}
	p.source.SetSelected(OverlayAttentionTo)
	if !strings.Contains(p.caption.Text, "computing") {
		t.Errorf("caption while computing: %q", p.caption.Text)
	}
	for _, head := range []int{-1, 2} {
		in.SelectHead(head)
		h.pump("the column", func() bool {
			return in.maps.rows.HasAttentionTo(s.Probes, in.Sel.Block, head, in.Sel.Query)
		})
		want, err := s.Probes.AttentionColumn(context.Background(), in.Sel.Block, head, in.Sel.Query)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.values, want) {
			t.Errorf("head %d: the overlay is not the column", head)
		}
		if row, _ := in.maps.rows.WaitRow(s.Probes, in.Sel.Block, head, in.Sel.Query); slices.Equal(row, want) {
			t.Errorf("head %d: the column equals the row", head)
		}
		if !strings.Contains(p.caption.Text, "TO the query") {
			t.Errorf("caption %q", p.caption.Text)
		}
		// the numbered marks on the image and the list are the same patches, in order
		list := listedPatches(in.panels.attention.topk.Text)
		marks := p.marks()
		if len(marks) == 0 || len(list) < len(marks) || !slices.Equal(list[:len(marks)], marks) || !strings.Contains(in.panels.attention.topHead.Text, "attending most to the query") {
			t.Errorf("head %d: marks %v, the list %v (%q)", head, marks, list, in.panels.attention.topHead.Text)
		}
	}
}

// listedPatches are the patches of the attention panel's top list, in order.
func listedPatches(text string) []int {
	var out []int
	for _, l := range strings.Split(text, "\n") {
		var i, p int
		if n, _ := fmt.Sscanf(strings.TrimSpace(l), "%d. patch %d", &i, &p); n == 2 {
			out = append(out, p)
		}
	}
	return out
}

// The rollout's fusion and discard are offered with the rollout overlay and reach the probe.
// Catches: the options not passed on, a cached rollout of other options shown.
func TestRolloutOptionsInThePanel(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	if p.rollOpts.Visible() {
		t.Error("rollout options shown with the attention overlay")
	}
	in.SelectBlock(2)
	in.SetOverlay(OverlayRollout)
	h.pump("the plain rollout", func() bool { return rolloutShown(p) })
	if !p.rollOpts.Visible() {
		t.Error("rollout options hidden with the rollout overlay")
	}
	plain := slices.Clone(p.values)
	p.fusion.SetSelected("max")
	p.discard.SetSelected("0.9")
	h.pump("the max / 0.9 rollout", func() bool { return rolloutShown(p) && strings.Contains(p.caption.Text, "fused by max, discard 0.9") })
	want, err := in.Snap.Probes.Rollout(context.Background(), in.Sel.Query, 2, probe.RolloutOptions{Fusion: probe.FuseMax, Discard: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(p.values, want, 1e-5) || closeTo(p.values, plain, 1e-5) {
		t.Errorf("the overlay is not the max-fused rollout discarding 0.9")
	}
	if !strings.Contains(p.caption.Text, "fused by max, discard 0.9") {
		t.Errorf("caption %q", p.caption.Text)
	}
}

// The attention matrix: the whole segment max-pooled (and said so), the query's row marked,
// a drag zooms. Catches: another block or head's matrix, the zoom not reaching the probe, a
// pooled matrix not said to be pooled.
func TestAttentionMatrixPane(t *testing.T) {
	h := hmDemo(t)
	in := h.in
	mp := &in.panels.attention.mtx
	in.panels.attention.lower.SelectIndex(1)
	h.pump("the matrix", func() bool { return mp.m != nil })
	s := in.Snap
	seg := s.Layout.SegmentOf(in.Sel.Block, in.Sel.Query)
	L := seg.End - seg.Start
	want, err := s.Probes.AttentionMatrix(context.Background(), in.Sel.Block, in.Sel.Head, seg, probe.Whole(L), matrixSide)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mp.m.Vals, want.Vals) || mp.m.Rows != want.Rows || !want.Pooled() {
		t.Fatalf("matrix %dx%d, want %dx%d (pooled %v)", mp.m.Rows, mp.m.Cols, want.Rows, want.Cols, want.Pooled())
	}
	if !strings.Contains(mp.caption.Text, "max-pooling") {
		t.Errorf("caption %q does not say the matrix is pooled", mp.caption.Text)
	}
	if r, _ := want.CellOf(in.Sel.Query-seg.Start, 0); r < 0 {
		t.Fatal("the query's row is not in the matrix")
	}
	mp.view.OnZoom(10, 20, 30, 45)
	h.pump("the zoomed matrix", func() bool { return mp.m.Region != want.Region })
	zr := probe.MatrixRegion{Row0: 10 * want.RowStep, Row1: 20 * want.RowStep, Col0: 30 * want.ColStep, Col1: 45 * want.ColStep}
	if mp.m.Region != zr || mp.m.Pooled() {
		t.Errorf("zoomed to %+v (pooled %v), want %+v unpooled", mp.m.Region, mp.m.Pooled(), zr)
	}
	if !strings.Contains(mp.caption.Text, "Zoomed") {
		t.Errorf("caption %q", mp.caption.Text)
	}
	zoomed, _ := s.Probes.AttentionMatrix(context.Background(), in.Sel.Block, in.Sel.Head, seg, zr, matrixSide)
	if !slices.Equal(mp.m.Vals, zoomed.Vals) {
		t.Error("the zoomed matrix is not the region's")
	}
	in.SelectHead(1)
	h.pump("head 1's matrix", func() bool { return strings.HasSuffix(mp.key, fmt.Sprintf("/1/%v", zr)) })
	h1, _ := s.Probes.AttentionMatrix(context.Background(), in.Sel.Block, 1, seg, zr, matrixSide)
	if !slices.Equal(mp.m.Vals, h1.Vals) {
		t.Error("after choosing head 1 the matrix is not head 1's")
	}
	mp.whole.OnTapped()
	h.pump("the whole matrix again", func() bool { return mp.m.Region == probe.Whole(L) })
}

// The heatmap settings survive a relaunch (a new Inspector on the same preferences), and
// nil preferences give the defaults. Catches: a setting not saved, not read back, or read
// into the options but not shown by its control.
func TestHeatmapPreferencesPersist(t *testing.T) {
	h := hmDemo(t)
	p := h.in.panels.image
	p.colors.SetSelected("magma")
	p.opacity.SetValue(0.35)
	p.opacity.OnChanged(0.35)
	h.in.SetOverlay(OverlayRollout)
	p.clip.SetSelected("99.9th pct")
	p.logScale.SetChecked(true)
	p.exclude.SetChecked(false)
	p.shared.SetChecked(true)
	p.diverging.SetChecked(false)
	p.follow.SetChecked(true)
	p.fusion.SetSelected("min")
	p.discard.SetSelected("0.8")

	win := test.NewWindow(nil)
	defer win.Close()
	ctl := NewController(func(f func()) {}, cpuOnly)
	defer ctl.Close()
	in2 := NewInspector(win, ctl, h.in.memory.prefs)
	q := in2.panels.image
	want := heatmapOptions{Clip: 99.9, Log: true, ExcludeQuery: false, Shared: true, Diverging: false, Follow: true, Fusion: probe.FuseMin, Discard: 0.8}
	if in2.maps.opts != want {
		t.Errorf("relaunched options %+v, want %+v", in2.maps.opts, want)
	}
	if in2.Sel.Colors != widgets.Magma || math.Abs(in2.Sel.Opacity-0.35) > 1e-9 || in2.Sel.Overlay != OverlayRollout {
		t.Errorf("relaunched selection: %v, %v, %q", in2.Sel.Colors, in2.Sel.Opacity, in2.Sel.Overlay)
	}
	if q.clip.Selected != "99.9th pct" || !q.logScale.Checked || q.exclude.Checked || !q.shared.Checked || q.diverging.Checked ||
		!q.follow.Checked || q.fusion.Selected != "min" || q.discard.Selected != "0.8" || q.colors.Selected != "magma" ||
		q.source.Selected != OverlayRollout || math.Abs(q.opacity.Value-0.35) > 1e-9 {
		t.Errorf("the relaunched controls do not show the saved settings: clip %q log %v exclude %v shared %v diverging %v follow %v fusion %q discard %q colours %q overlay %q opacity %v",
			q.clip.Selected, q.logScale.Checked, q.exclude.Checked, q.shared.Checked, q.diverging.Checked, q.follow.Checked,
			q.fusion.Selected, q.discard.Selected, q.colors.Selected, q.source.Selected, q.opacity.Value)
	}
	win3 := test.NewWindow(nil)
	defer win3.Close()
	ctl3 := NewController(func(f func()) {}, cpuOnly)
	defer ctl3.Close()
	if in3 := NewInspector(win3, ctl3, nil); in3.maps.opts != defaultHeatmap || in3.Sel.Overlay != OverlayAttention {
		t.Errorf("no preferences: %+v, %q", in3.maps.opts, in3.Sel.Overlay)
	}
}

// The channel entry shows four digits whole (D up to 1152, I up to 4304). Catches: a plain
// Entry, which a row shrinks to about one character.
func TestChannelEntryShowsFourDigits(t *testing.T) {
	h := hmDemo(t)
	e := h.in.panels.image.channel
	e.SetText("4303")
	th := e.Theme()
	need := fyne.MeasureText("4303", th.Size(theme.SizeNameText), e.TextStyle).Width + 2*th.Size(theme.SizeNameInnerPadding)
	if w := e.Size().Width; w < need {
		t.Errorf("the channel entry is %.0f wide, %.0f needed for 4303", w, need)
	}
}

// A new run of another image on the same grid: the rows shown are the new run's, not the
// cache's. Catches: a row cache keyed by block and query alone.
func TestRowsFollowTheRun(t *testing.T) {
	h := hmDemo(t)
	in := h.in
	q, b := in.Sel.Query, in.Sel.Block
	old := slices.Clone(in.panels.image.values)
	path := mirrored(t) // the same page size, other attention
	gen := in.Snap.Gen
	in.OpenFiles(demoDir, path)
	h.pump("the flipped run", func() bool { return in.Snap.Gen != gen && in.Snap.Finished })
	in.Sel.Query, in.Sel.Block = q, b
	in.refresh()
	h.settle() // the row is computed off the UI goroutine (a cache keyed without the run answers at once, with the old row)
	want, err := in.Snap.Probes.AttentionRowMean(b, q)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(want, old) {
		t.Fatal("the flipped page gives the same row: the check is vacuous")
	}
	if !slices.Equal(in.panels.image.values, want) {
		t.Error("after a new run the overlay shows the old run's row")
	}
}

// rolloutShown says whether the rollout overlay shows a map (the table reached the block).
func rolloutShown(p *imagePanel) bool {
	return p.values != nil && !strings.Contains(p.caption.Text, "building") && !strings.Contains(p.caption.Text, "computing")
}

// closeTo says whether a and b agree within rel of b's largest magnitude (the rollout table's
// rows are the per-query rollout within float32 rounding).
func closeTo(a, b []float32, rel float64) bool {
	if len(a) != len(b) {
		return false
	}
	var big float64
	for _, x := range b {
		big = math.Max(big, math.Abs(float64(x)))
	}
	for i := range a {
		if math.Abs(float64(a[i])-float64(b[i])) > rel*big {
			return false
		}
	}
	return true
}
