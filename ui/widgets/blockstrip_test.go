// blockstrip_test.go: pins the block strip against its picture. Invariant: the cell under the
// pointer is the block a tap reports, NaN cells are neutral grey and finite cells take the
// colormap over the finite range. The mutation these tests catch: hit-testing with x/cellWidth
// (ignoring rounding and gaps), or colouring NaN through the colormap (transparent).
package widgets

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

func TestBlockStripTapSelectsBlockUnderPointer(t *testing.T) {
	stripTestApp(t, theme.VariantDark)
	for _, n := range []int{10, 27} {
		got := -1
		s := NewBlockStrip(func(b int) { got = b })
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(i)
		}
		s.SetValues(vals, Viridis)
		const W = 811 // not a multiple of n: rounding matters
		win := stripTestWindow(t, s, W, 40)
		for i := 0; i < n; i++ {
			// The centre of cell i, computed from the strip's width alone.
			x := (float32(i) + 0.5) * W / float32(n)
			got = -1
			test.TapCanvas(win.Canvas(), fyne.NewPos(x, 10))
			if got != i {
				t.Fatalf("n=%d: tap at x=%.1f selected %d, want %d", n, x, got, i)
			}
			if s.Selected() != i {
				t.Fatalf("n=%d: Selected()=%d after tapping %d", n, s.Selected(), i)
			}
		}
		// The last unit of the strip is still the last block.
		got = -1
		test.TapCanvas(win.Canvas(), fyne.NewPos(W-0.5, 10))
		if got != n-1 {
			t.Fatalf("n=%d: tap at the right edge selected %d", n, got)
		}
	}
	// The brief's example, through the widget's own Tapped: 5th cell of 10 is block 4.
	got := -1
	s := NewBlockStrip(func(b int) { got = b })
	s.SetValues(make([]float64, 10), Viridis)
	stripTestWindow(t, s, 500, 40)
	test.TapAt(s, fyne.NewPos(225, 5))
	if got != 4 {
		t.Fatalf("tapping the 5th cell of 10 gave %d, want 4", got)
	}
}

func TestBlockStripColoursNaNGreyAndColormap(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	s := NewBlockStrip(nil)
	nan := math.NaN()
	vals := []float64{2, nan, 4, 10, nan, 6}
	s.SetValues(vals, Magma)
	const W, H = 600, 40
	win := stripTestWindow(t, s, W, H)
	img := win.Canvas().Capture()
	grey := stripNeutral(th, theme.VariantDark)
	bg := th.Color(theme.ColorNameBackground, theme.VariantDark)
	for i, v := range vals {
		// A point inside cell i, away from its centred label and rounded corners.
		p := stripPixel(img, float32(i)*W/6+6, stripTop+4)
		var want color.Color
		if math.IsNaN(v) {
			want = grey
			if !stripClose(p, color.NRGBA{p.G, p.G, p.G, 255}, 2) {
				t.Errorf("cell %d (NaN) is not grey: %v", i, p)
			}
		} else {
			want = Magma.At((v - 2) / (10 - 2))
		}
		if !stripClose(p, want, 2) {
			t.Errorf("cell %d (value %v): pixel %v, want %v", i, v, p, want)
		}
		if stripClose(p, bg, 2) {
			t.Errorf("cell %d is not drawn (background %v)", i, p)
		}
	}
	// The smallest value is the bottom of the map and the largest its top.
	if !stripClose(stripPixel(img, 0*W/6+6, stripTop+4), Magma.At(0), 2) ||
		!stripClose(stripPixel(img, 3*W/6+6, stripTop+4), Magma.At(1), 2) {
		t.Error("the value range does not span the colormap")
	}
}

func TestBlockStripSelectionAndCurrentMarker(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	s := NewBlockStrip(nil)
	s.SetValues([]float64{1, 2, 3, 4, 5, 6, 7, 8}, Viridis)
	const W, H = 400, 40
	win := stripTestWindow(t, s, W, H)
	fg := th.Color(theme.ColorNameForeground, theme.VariantDark)
	primary := th.Color(theme.ColorNamePrimary, theme.VariantDark)
	cellH := stripCellHeight(H)

	// The outline of cell 3 lies in the gap between cells 2 and 3, half way down.
	gapX := float32(3*W/8) - 1
	before := stripPixel(win.Canvas().Capture(), gapX, stripTop+cellH/2)
	if stripClose(before, fg, 40) {
		t.Fatalf("gap already foreground before selection: %v", before)
	}
	s.SetSelected(3)
	after := stripPixel(win.Canvas().Capture(), gapX, stripTop+cellH/2)
	if !stripClose(after, fg, 40) {
		t.Fatalf("selected cell 3 not outlined: gap pixel %v, want ~%v", after, fg)
	}
	if s.Selected() != 3 {
		t.Fatalf("Selected()=%d", s.Selected())
	}

	// The current block is underlined in the primary colour; the others are not.
	s.SetCurrent(5)
	img := win.Canvas().Capture()
	markY := stripTop + cellH + stripMarkerGap + 1
	for i := 0; i < 8; i++ {
		p := stripPixel(img, (float32(i)+0.5)*W/8, markY)
		if on := stripClose(p, primary, 2); on != (i == 5) {
			t.Errorf("block %d: underline pixel %v (primary %v), marked=%v", i, p, primary, on)
		}
	}
	s.SetCurrent(-1)
	if p := stripPixel(win.Canvas().Capture(), 5.5*W/8, markY); stripClose(p, primary, 2) {
		t.Error("SetCurrent(-1) left the underline")
	}
}

func TestBlockStripTooltip(t *testing.T) {
	stripTestApp(t, theme.VariantDark)
	s := NewBlockStrip(nil)
	s.SetValues([]float64{0.5, math.NaN(), 12.26}, Viridis)
	win := stripTestWindow(t, s, 300, 40)
	r := test.WidgetRenderer(s).(*stripRenderer)

	test.MoveMouse(win.Canvas(), fyne.NewPos(250, 10))
	if got := r.tip.text(); got != "block 2 · 12.3" {
		t.Fatalf("tooltip over block 2: %q", got)
	}
	test.MoveMouse(win.Canvas(), fyne.NewPos(150, 10))
	if got := r.tip.text(); got != "block 1 · not run yet" {
		t.Fatalf("tooltip over block 1: %q", got)
	}
	s.SetTooltip(func(b int) string { return strings.Repeat("x", b+1) })
	test.MoveMouse(win.Canvas(), fyne.NewPos(50, 10))
	if got := r.tip.text(); got != "x" {
		t.Fatalf("custom tooltip over block 0: %q", got)
	}
	// The tooltip is drawn: some pixels change while it shows.
	shown := win.Canvas().Capture()
	s.MouseOut()
	if r.tip.text() != "" {
		t.Fatal("tooltip still shown after MouseOut")
	}
	hidden := win.Canvas().Capture()
	if stripSameImage(shown, hidden) {
		t.Fatal("the tooltip is not drawn")
	}
}

func stripSameImage(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if stripNRGBA(a.At(x, y)) != stripNRGBA(b.At(x, y)) {
				return false
			}
		}
	}
	return true
}

// In both themes, 27 blocks wide (labelled) and narrow (too narrow for labels): run cells
// take the colormap over the finite range, blocks not run are the theme's neutral grey, and
// a narrow cell's centre is its fill, not a label spilling over.
func TestBlockStripBothThemes(t *testing.T) {
	stripTestThemes(t, func(th fyne.Theme, v fyne.ThemeVariant) {
		vals := make([]float64, 27)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range vals {
			vals[i] = 0.2 + 0.8*math.Abs(math.Sin(float64(i)*0.7))
			if i >= 20 {
				vals[i] = math.NaN()
				continue
			}
			lo, hi = min(lo, vals[i]), max(hi, vals[i])
		}
		grey := stripNeutral(th, v)
		for _, W := range []float32{820, 300} {
			s := NewBlockStrip(nil)
			s.SetValues(vals, Viridis)
			s.SetSelected(7)
			s.SetCurrent(20)
			win := stripTestWindow(t, s, W, 34)
			img := win.Canvas().Capture()
			cell := W / 27
			for i, x := range vals {
				want := grey
				if !math.IsNaN(x) {
					want = Viridis.At((x - lo) / (hi - lo))
				}
				probes := []float32{float32(i)*cell + min(6, cell/3)}
				if W < 400 {
					probes = append(probes, (float32(i)+0.5)*cell)
				}
				for _, px := range probes {
					if p := stripPixel(img, px, stripTop+stripCellHeight(34)/2); !stripClose(p, want, 2) {
						t.Errorf("%s theme, width %v: block %d (value %v) at x=%.0f is %v, want %v", stripVariantName(v), W, i, x, px, p, want)
					}
				}
			}
		}
	})
}
