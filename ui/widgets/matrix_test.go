// matrix_test.go: pins the matrix against its picture. Invariant: cell (r, c) shows
// vals[r*cols+c] at row r, column c, NaN grey, and a tap there reports (r, c). The mutations
// these tests catch: column-major indexing, swapped row/column in the hit test, rounding that
// selects a neighbour, and NaN coloured through the colormap.
package widgets

import (
	"fmt"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// matrixDemo is a 27 x 16 block x head grid of mean attention distances: local heads early,
// global heads late, a few heads without data.
func matrixDemo() []float64 {
	vals := make([]float64, 27*16)
	for b := 0; b < 27; b++ {
		for h := 0; h < 16; h++ {
			d := 3 + 20*float64(b)/26 + 6*math.Sin(float64(h)*1.3+float64(b)*0.2)
			if h == 5 && b < 4 {
				d = math.NaN()
			}
			vals[b*16+h] = math.Max(d, 0.5)
		}
	}
	return vals
}

func TestMatrixTapGivesRowAndColumn(t *testing.T) {
	stripTestApp(t, theme.VariantDark)
	gotR, gotC := -1, -1
	m := NewMatrix(func(r, c int) { gotR, gotC = r, c })
	m.SetData(27, 16, matrixDemo(), Viridis, "block", "head", nil)
	win := stripTestWindow(t, m, 533, 611)
	g := m.geom(m.Size(), m.Theme())
	for r := 0; r < 27; r++ {
		for c := 0; c < 16; c++ {
			// The centre of cell (r, c), from the grid's extent alone.
			x := g.x0 + (float32(c)+0.5)*(g.x1-g.x0)/16
			y := g.y0 + (float32(r)+0.5)*(g.y1-g.y0)/27
			gotR, gotC = -1, -1
			test.TapCanvas(win.Canvas(), fyne.NewPos(x, y))
			if gotR != r || gotC != c {
				t.Fatalf("tap at the centre of (%d,%d) gave (%d,%d)", r, c, gotR, gotC)
			}
		}
	}
	if r, c := m.Selected(); r != 26 || c != 15 {
		t.Fatalf("Selected()=(%d,%d) after the last tap", r, c)
	}
	// Outside the grid (on the labels) nothing is selected.
	gotR = -1
	test.TapCanvas(win.Canvas(), fyne.NewPos(2, 2))
	if gotR != -1 {
		t.Fatalf("tap on the corner label selected row %d", gotR)
	}
}

func TestMatrixCellColoursRowMajorAndNaNGrey(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	m := NewMatrix(nil)
	const rows, cols = 3, 5
	vals := make([]float64, rows*cols)
	for i := range vals {
		vals[i] = float64(i) // row-major: 0..14, so every cell has its own colour
	}
	vals[1*cols+3] = math.NaN()
	m.SetData(rows, cols, vals, Turbo, "block", "head", nil)
	win := stripTestWindow(t, m, 400, 260)
	img := win.Canvas().Capture()
	g := m.geom(m.Size(), m.Theme())
	grey := stripNeutral(th, theme.VariantDark)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			x := g.x0 + (float32(c)+0.5)*(g.x1-g.x0)/cols
			y := g.y0 + (float32(r)+0.5)*(g.y1-g.y0)/rows
			p := stripPixel(img, x, y)
			v := vals[r*cols+c]
			want := grey
			if math.IsNaN(v) && matrixHatched(int(x)-int(g.x0), int(y)-int(g.y0), 6) {
				want = matrixHatch(grey, th.Color(theme.ColorNameForeground, theme.VariantDark))
			}
			if !math.IsNaN(v) {
				want = Turbo.At(v / 14)
			}
			if !stripClose(p, want, 2) {
				t.Errorf("cell (%d,%d) value %v: pixel %v, want %v", r, c, v, p, want)
			}
		}
	}
}

func TestMatrixSelectionOutlineAndTooltip(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	m := NewMatrix(nil)
	vals := make([]float64, 4*4)
	for i := range vals {
		vals[i] = 0.25 * float64(i)
	}
	vals[2*4+1] = math.NaN()
	m.SetData(4, 4, vals, Magma, "block", "head", func(v float64) string { return fmt.Sprintf("%.2f px", v) })
	win := stripTestWindow(t, m, 300, 300)
	g := m.geom(m.Size(), m.Theme())
	fg := th.Color(theme.ColorNameForeground, theme.VariantDark)
	// The gap pixel just left of cell (1, 2): background, then outline once selected.
	x0, _ := matrixEdges(2, 4, g.x0, g.x1)
	y0, y1 := matrixEdges(1, 4, g.y0, g.y1)
	probe := func() bool { return stripClose(stripPixel(win.Canvas().Capture(), x0-1, (y0+y1)/2), fg, 30) }
	if probe() {
		t.Fatal("outline before selection")
	}
	m.SetSelected(1, 2)
	if !probe() {
		t.Fatal("selected cell (1,2) is not outlined")
	}
	m.SetSelected(-1, -1)
	if probe() {
		t.Fatal("outline left after clearing the selection")
	}

	r := test.WidgetRenderer(m).(*matrixRenderer)
	at := func(row, col int) fyne.Position {
		return fyne.NewPos(g.x0+(float32(col)+0.5)*(g.x1-g.x0)/4, g.y0+(float32(row)+0.5)*(g.y1-g.y0)/4)
	}
	test.MoveMouse(win.Canvas(), at(3, 2))
	if got := r.tip.text(); got != "block 3 · head 2: 3.50 px" {
		t.Errorf("tooltip over (3,2): %q", got)
	}
	test.MoveMouse(win.Canvas(), at(2, 1))
	if got := r.tip.text(); got != "block 2 · head 1: no data" {
		t.Errorf("tooltip over (2,1): %q", got)
	}
	m.MouseOut()
	if got := r.tip.text(); got != "" {
		t.Errorf("tooltip after MouseOut: %q", got)
	}
}

// In both themes, 27 blocks x 16 heads: every cell's centre is its value on the colormap
// over the finite range, no-data cells the theme's grey (or its hatch).
func TestMatrixBothThemes(t *testing.T) {
	stripTestThemes(t, func(th fyne.Theme, v fyne.ThemeVariant) {
		vals := matrixDemo()
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range vals {
			if !math.IsNaN(x) {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		m := NewMatrix(nil)
		m.SetData(27, 16, vals, Viridis, "block", "head", func(x float64) string { return fmt.Sprintf("%.1f px", x) })
		m.SetSelected(12, 7)
		win := stripTestWindow(t, m, 420, 520)
		img := win.Canvas().Capture()
		g := m.geom(m.Size(), m.Theme())
		grey := stripNeutral(th, v)
		bad := 0
		for r := 0; r < 27; r++ {
			for c := 0; c < 16; c++ {
				x := g.x0 + (float32(c)+0.5)*(g.x1-g.x0)/16
				y := g.y0 + (float32(r)+0.5)*(g.y1-g.y0)/27
				val := vals[r*16+c]
				want := grey
				switch {
				case !math.IsNaN(val):
					want = Viridis.At((val - lo) / (hi - lo))
				case matrixHatched(int(x)-int(g.x0), int(y)-int(g.y0), 6):
					want = matrixHatch(grey, th.Color(theme.ColorNameForeground, v))
				}
				if p := stripPixel(img, x, y); !stripClose(p, want, 2) && bad < 5 {
					bad++
					t.Errorf("%s theme: cell (%d,%d) value %v is %v, want %v", stripVariantName(v), r, c, val, p, want)
				}
			}
		}
	})
}
