// heatmap_widgets_test.go: the widgets under the scale options — the Legend labels the
// Scale it is given (log, diverging, clipped, constant), the ImageView paints with it and
// reports modifier keys on hover, the HeadGrid paints each map with the scale given for it
// (one shared scale makes a weak head dark), the MatrixView is row-major with a drag that
// reports the cells it covers, and a Figure's bar is the scale under its panels.
// Mutations they catch: the legend ignoring the log or the clip, a view painting linearly
// under a log scale, per-head scales where one is shared, a column-major matrix, a drag
// reporting a rectangle off by one cell, a figure bar drawn reversed or for a constant map.
package widgets

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
)

func TestLegendShowsTheScaleUsed(t *testing.T) {
	test.NewTempApp(t)
	l := NewLegend()
	ivTestWindow(t, l, fyne.NewSize(300, 64))
	log := ComputeScale([][]float32{{1e-4, 1e-2, 1}}, ScaleOptions{Log: true})
	l.SetScale(Viridis, log, "attention · log10")
	if ticks, caption := l.Labels(); ticks != [3]string{"1e-04", "0.01", "1"} || caption != "attention · log10" {
		t.Errorf("log legend %q %q", ticks, caption)
	}
	div := ComputeScale([][]float32{{-3, 1, 2}}, ScaleOptions{Diverging: true})
	l.SetScale(CoolWarm, div, "mean")
	if ticks, _ := l.Labels(); ticks != [3]string{"-3", "0", "3"} {
		t.Errorf("diverging legend %q", ticks)
	}
	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(i)
	}
	clip := ComputeScale([][]float32{vals}, ScaleOptions{Clip: 99, FromZero: true})
	l.SetScale(Viridis, clip, "")
	if ticks, _ := l.Labels(); ticks[0] != "0" || ticks[2] != "≥989" {
		t.Errorf("clipped legend %q, want 0 .. ≥989", ticks)
	}
	if !l.BarShown() {
		t.Error("no bar for a scale")
	}
	l.SetScale(Viridis, ComputeScale([][]float32{{2, 2}}, ScaleOptions{}), "channel 0")
	r := test.WidgetRenderer(l).(*legendRenderer)
	if ticks, _ := l.Labels(); l.BarShown() || !r.bar.Hidden || ticks[1] != "= 2" {
		t.Errorf("constant map: bar shown %v (hidden %v), labels %q", l.BarShown(), r.bar.Hidden, ticks)
	}
}

func TestImageViewPaintsWithTheScale(t *testing.T) {
	const W, H = 256, 128
	v, _, g := ivTestView(t, ivTestGray(W, H, 128), fyne.NewSize(600, 220))
	vals := make([]float32, g.Len())
	for i := range vals {
		vals[i] = float32(math.Pow(10, -float64(i%5))) // 1 .. 1e-4
	}
	sc := ComputeScale([][]float32{vals}, ScaleOptions{Log: true})
	v.SetOverlayScale(vals, Magma, sc)
	v.SetOpacity(1)
	img := v.OverlayImage()
	for r := range g.Rows {
		for c := range g.Cols {
			want := Magma.At(sc.Norm(vals[g.At(r, c)]))
			got := color.NRGBAModel.Convert(img.At(c*W/g.Cols+W/g.Cols/2, r*H/g.Rows+H/g.Rows/2)).(color.NRGBA)
			if !stripClose(got, want, 1) {
				t.Fatalf("patch (%d,%d) = %v, want %v (log scale)", r, c, got, want)
			}
		}
	}
	// the same composition at another resolution, through ComposeHeatmap
	big := ComposeHeatmap(ivTestGray(2*W, 2*H, 128), g, vals, Magma, sc, 1)
	p := g.At(1, 6)
	if got := color.NRGBAModel.Convert(big.At(6*2*W/g.Cols+5, 1*2*H/g.Rows+5)).(color.NRGBA); !stripClose(got, Magma.At(sc.Norm(vals[p])), 1) {
		t.Errorf("ComposeHeatmap at 2x: %v", got)
	}
}

func TestImageViewHoverReportsModifiers(t *testing.T) {
	v, _, g := ivTestView(t, ivTestGray(256, 128, 128), fyne.NewSize(600, 220))
	type call struct {
		patch int
		mods  fyne.KeyModifier
	}
	var calls []call
	v.OnHoverMods = func(p int, m fyne.KeyModifier) { calls = append(calls, call{p, m}) }
	at := ivTestCentre(v.Size(), 256, 128, g, 1, 2)
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: at}})
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: at}, Modifier: fyne.KeyModifierShift})
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: at.AddXY(1, 0)}, Modifier: fyne.KeyModifierShift})
	want := []call{{g.At(1, 2), 0}, {g.At(1, 2), fyne.KeyModifierShift}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
		t.Errorf("hover calls %v, want %v (a new patch, then Shift pressed; nothing when neither changes)", calls, want)
	}
	if v.Hovered() != g.At(1, 2) {
		t.Errorf("Hovered() = %d", v.Hovered())
	}
}

func TestHeadGridSharedScale(t *testing.T) {
	test.NewTempApp(t)
	g := ivTestGrid()
	maps := headGridTestMaps(g, 4) // head 0's peak is 0.01, head 3's 10
	hg := NewHeadGrid(nil)
	ivTestWindow(t, hg, fyne.NewSize(640, 420))
	peak := func(h int) color.NRGBA {
		hg.mu.Lock()
		defer hg.mu.Unlock()
		img := hg.thumbs[h]
		return color.NRGBAModel.Convert(img.At((3*h+1)%8, h%4)).(color.NRGBA)
	}
	shared := ComputeScale(maps, ScaleOptions{FromZero: true})
	hg.SetMapScales(maps, g, Viridis, []Scale{shared})
	if got := peak(3); !stripClose(got, Viridis.At(1), 1) {
		t.Errorf("shared: the strongest head's peak %v, want the top colour", got)
	}
	if got, want := peak(0), Viridis.At(shared.Norm(maps[0][g.At(0, 1)])); !stripClose(got, want, 1) || stripClose(got, Viridis.At(1), 20) {
		t.Errorf("shared: the weakest head's peak %v, want %v (dark: one scale)", got, want)
	}
	own := make([]Scale, len(maps))
	for h, m := range maps {
		own[h] = ComputeScale([][]float32{m}, ScaleOptions{FromZero: true})
	}
	hg.SetMapScales(maps, g, Viridis, own)
	if got := peak(0); !stripClose(got, Viridis.At(1), 1) {
		t.Errorf("own scales: the weakest head's peak %v, want the top colour", got)
	}
}

func TestMatrixViewRowMajorAndDragZoom(t *testing.T) {
	test.NewTempApp(t)
	m := NewMatrixView()
	win := ivTestWindow(t, m, fyne.NewSize(300, 200))
	rows, cols := 3, 4
	vals := make([]float32, rows*cols)
	for i := range vals {
		vals[i] = float32(i)
	}
	sc := ComputeScale([][]float32{vals}, ScaleOptions{})
	m.SetData(rows, cols, vals, Viridis, sc)
	capImg := win.Canvas().Capture()
	for r := range rows {
		for c := range cols {
			p := m.CellCentre(r, c)
			if gr, gc := m.CellAt(p); gr != r || gc != c {
				t.Fatalf("CellAt(centre of %d,%d) = %d,%d", r, c, gr, gc)
			}
			want := Viridis.At(sc.Norm(vals[r*cols+c]))
			if got := stripPixel(capImg, p.X, p.Y); !stripClose(got, want, 3) {
				t.Errorf("cell (%d,%d) = %v, want %v (vals[%d])", r, c, got, want, r*cols+c)
			}
		}
	}
	var zoom [4]int
	m.OnZoom = func(r0, r1, c0, c1 int) { zoom = [4]int{r0, r1, c0, c1} }
	// as the desktop driver reports a drag: the pointer's position now and the move since the
	// last event (fyne/test's Drag reports the start position instead)
	from, to := m.CellCentre(2, 3), m.CellCentre(1, 1)
	mid := fyne.NewPos((from.X+to.X)/2, (from.Y+to.Y)/2)
	m.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: mid}, Dragged: fyne.NewDelta(mid.X-from.X, mid.Y-from.Y)})
	m.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: to}, Dragged: fyne.NewDelta(to.X-mid.X, to.Y-mid.Y)})
	m.DragEnd()
	if zoom != [4]int{1, 3, 1, 4} {
		t.Errorf("drag from cell (2,3) to (1,1) zooms to %v, want rows [1,3) cols [1,4)", zoom)
	}
	var hov [2]int
	m.OnHover = func(r, c int) { hov = [2]int{r, c} }
	test.MoveMouse(win.Canvas(), m.CellCentre(0, 2))
	if hov != [2]int{0, 2} {
		t.Errorf("hover reports %v", hov)
	}
	m.SetMarkedRow(1)
	r := test.WidgetRenderer(m).(*mvRenderer)
	if p, _ := m.CellAt(r.mark.Position().AddXY(2, r.mark.Size().Height/2)); r.mark.Hidden || p != 1 {
		t.Errorf("marked row: hidden %v, at row %d", r.mark.Hidden, p)
	}
}

func TestFigureBarIsTheScale(t *testing.T) {
	test.NewTempApp(t)
	panel := image.NewRGBA(image.Rect(0, 0, 40, 30))
	sc := ComputeScale([][]float32{{0, 0.5, 1}}, ScaleOptions{})
	f := Figure{Panels: []image.Image{panel, panel, panel}, Labels: []string{"h0", "h1", "h2"}, Cols: 2,
		Colormap: Magma, Scale: sc, ScaleCaption: "attention", Caption: []string{"block 3, head 1", "query 7"}}
	img, lay := RenderFigure(f)
	if len(lay.Panels) != 3 || lay.Panels[1].Min.Y != lay.Panels[0].Min.Y || lay.Panels[2].Min.Y <= lay.Panels[0].Max.Y {
		t.Fatalf("panels at %v: want two in the first row, one under", lay.Panels)
	}
	b := lay.Bar
	if b.Empty() || b.Min.Y <= lay.Panels[2].Max.Y {
		t.Fatalf("bar %v: want under the panels", b)
	}
	y := (b.Min.Y + b.Max.Y) / 2
	if got := img.At(b.Min.X, y); !stripClose(got, Magma.At(0), 2) {
		t.Errorf("bar's left end %v, want %v", got, Magma.At(0))
	}
	if got := img.At(b.Max.X-1, y); !stripClose(got, Magma.At(1), 2) {
		t.Errorf("bar's right end %v, want %v", got, Magma.At(1))
	}
	if textRows(img, b.Max.Y+2, img.Bounds().Max.Y) == 0 {
		t.Error("no tick labels or caption under the bar")
	}
	// a constant map: no bar, and twice the zoom, twice the size
	f.Scale = ComputeScale([][]float32{{2, 2}}, ScaleOptions{})
	if _, lay := RenderFigure(f); !lay.Bar.Empty() {
		t.Errorf("a bar for a constant map: %v", lay.Bar)
	}
	f.Zoom = 2
	if big, _ := RenderFigure(f); big.Bounds().Dy() < img.Bounds().Dy()+20 {
		t.Errorf("zoom 2: %v, zoom 1: %v", big.Bounds(), img.Bounds())
	}
	if !strings.Contains(legendTicks(sc)[2], "1") {
		t.Error("ticks")
	}
}

// textRows counts rows of img in [y0, y1) holding a dark (text) pixel.
func textRows(img image.Image, y0, y1 int) int {
	n := 0
	for y := y0; y < y1; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r < 0x4000 {
				n++
				break
			}
		}
	}
	return n
}
