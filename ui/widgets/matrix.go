// matrix.go: a rows x cols grid of coloured cells (block x head: mean attention distance,
// entropy ...), with row/column labels, a colour scale, a hover tooltip and a selected cell.
// Invariant: vals is row-major, so cell (r, c) shows vals[r*cols+c] at row r (top to bottom)
// and column c (left to right), and the raster that paints the cells and the hit test that
// answers a tap use the same cell edges. The mutation that would silently break it: indexing
// vals[c*rows+r] (column-major), which still fills every cell, just with another cell's value.
package widgets

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Matrix draws a rows x cols grid of cells coloured through a colormap, NaN cells grey, with
// the row and column indices, the axis names, a colour scale with its range, a tooltip with the
// value under the pointer, and the selected cell outlined.
//
// Like every Fyne widget it is changed on the UI goroutine; elsewhere wrap calls in fyne.Do.
type Matrix struct {
	widget.BaseWidget
	chartTap[matrixCell] // the cell under the pointer and the outlined one; matrixNone: none

	rows, cols         int
	vals               []float64
	cm                 Colormap
	rowLabel, colLabel string
	format             func(float64) string
	lo, hi             float64 // range of the finite values

	r *matrixRenderer // for pointer moves, which redraw the overlays only
}

var (
	_ fyne.Tappable      = (*Matrix)(nil)
	_ desktop.Hoverable  = (*Matrix)(nil)
	_ desktop.Cursorable = (*Matrix)(nil)
)

// matrixCell is a cell (row, col) of a Matrix.
type matrixCell struct{ row, col int }

// matrixNone is no cell.
var matrixNone = matrixCell{-1, -1}

// NewMatrix returns an empty matrix; onSelect (may be nil) is called with the tapped cell.
func NewMatrix(onSelect func(row, col int)) *Matrix {
	m := &Matrix{}
	hit := func(p fyne.Position) matrixCell {
		r, c := m.geom(m.Size(), m.Theme()).cellAt(p, m.rows, m.cols)
		return matrixCell{r, c}
	}
	var report func(matrixCell)
	if onSelect != nil {
		report = func(c matrixCell) { onSelect(c.row, c.col) }
	}
	// A pointer move redraws the overlays only; a tap everything (the indices go bold).
	m.chartTap = newChartTap(newChartHover(matrixNone, hit, m.refreshOverlays), m.Refresh, report)
	m.ExtendBaseWidget(m)
	return m
}

// SetData sets a rows x cols grid of values, row-major (missing values and NaN: no data,
// drawn grey), its colormap (over the range of the finite values), the axis names ("block",
// "head") and the value format of the tooltip and scale (nil: three significant digits).
func (m *Matrix) SetData(rows, cols int, vals []float64, cm Colormap, rowLabel, colLabel string, format func(float64) string) {
	m.rows, m.cols = max(rows, 0), max(cols, 0)
	m.vals = append(m.vals[:0], vals...)
	m.cm, m.rowLabel, m.colLabel, m.format = cm, rowLabel, colLabel, format
	m.lo, m.hi = math.Inf(1), math.Inf(-1)
	for i := 0; i < m.rows*m.cols && i < len(m.vals); i++ {
		if v := m.vals[i]; stripFinite(v) {
			m.lo, m.hi = math.Min(m.lo, v), math.Max(m.hi, v)
		}
	}
	if m.hovered.row >= m.rows || m.hovered.col >= m.cols {
		m.hovered = matrixNone
	}
	m.Refresh()
}

// SetSelected outlines cell (row, col); -1 for either clears it. It does not call onSelect.
func (m *Matrix) SetSelected(row, col int) {
	m.selected = matrixCell{row, col}
	m.Refresh()
}

// Selected returns the outlined cell, (-1, -1) if none.
func (m *Matrix) Selected() (row, col int) {
	s := m.selected
	if s.row < 0 || s.col < 0 || s.row >= m.rows || s.col >= m.cols {
		return -1, -1
	}
	return s.row, s.col
}

// Value is the value of cell (row, col): NaN where there is none.
func (m *Matrix) Value(row, col int) float64 {
	if row < 0 || col < 0 || row >= m.rows || col >= m.cols {
		return math.NaN()
	}
	if i := row*m.cols + col; i < len(m.vals) {
		return m.vals[i]
	}
	return math.NaN()
}

func (m *Matrix) formatValue(v float64) string {
	if m.format != nil {
		return m.format(v)
	}
	return stripFormat3(v)
}

// HoverText is what the tooltip says for cell (row, col), e.g. "block 7 · head 3: 0.412".
func (m *Matrix) HoverText(row, col int) string {
	if row < 0 || col < 0 || row >= m.rows || col >= m.cols {
		return ""
	}
	rl, cl := m.rowLabel, m.colLabel
	if rl == "" {
		rl = "row"
	}
	if cl == "" {
		cl = "col"
	}
	v := m.Value(row, col)
	val := "no data"
	if stripFinite(v) {
		val = m.formatValue(v)
	}
	return fmt.Sprintf("%s %d · %s %d: %s", rl, row, cl, col, val)
}

// cellColor is the fill of cell (row, col).
func (m *Matrix) cellColor(row, col int, grey color.Color) color.Color {
	v := m.Value(row, col)
	if !stripFinite(v) {
		return grey
	}
	return m.cm.At(Normalize(float32(v), float32(m.lo), float32(m.hi)))
}

// matrixGeom is where everything goes for one size.
type matrixGeom struct {
	x0, y0, x1, y1 float32 // the grid of cells
	textH          float32
	rowIdxW        float32 // the row indices' column, left of the grid
	scaleX         float32 // the colour scale's left edge
	scaleLabelW    float32
}

const (
	matrixScaleW   = 10 // colour scale bar width
	matrixScaleGap = 10 // between the grid and the scale
)

func (m *Matrix) geom(size fyne.Size, th fyne.Theme) matrixGeom {
	cs := th.Size(theme.SizeNameCaptionText)
	measure := func(s string, bold bool) float32 { return fyne.MeasureText(s, cs, fyne.TextStyle{Bold: bold}).Width }
	var g matrixGeom
	g.textH = fyne.MeasureText("0", cs, fyne.TextStyle{}).Height
	g.rowIdxW = float32(math.Ceil(float64(max(measure(strconv.Itoa(max(m.rows-1, 0)), true), measure(m.rowLabel, false))))) + 8
	if m.lo <= m.hi {
		g.scaleLabelW = float32(math.Ceil(float64(max(measure(m.formatValue(m.lo), false), measure(m.formatValue(m.hi), false))))) + 6
	}
	g.x0 = g.rowIdxW
	g.y0 = float32(math.Ceil(float64(2*g.textH))) + 4 // axis name, then column indices
	g.scaleX = float32(math.Floor(float64(size.Width - g.scaleLabelW - matrixScaleW)))
	g.x1 = g.scaleX - matrixScaleGap
	g.y1 = float32(math.Floor(float64(size.Height - 2)))
	return g
}

// matrixEdges returns the edges of cell i of n along a span from a to b: [lo, hi), whole
// numbers relative to a when a is whole, with a one-unit gap on the far side when cells are
// wide enough to spare it.
func matrixEdges(i, n int, a, b float32) (lo, hi float32) {
	pitch := (b - a) / float32(n)
	lo = float32(math.Round(float64(a + float32(i)*pitch)))
	hi = float32(math.Round(float64(a + float32(i+1)*pitch)))
	if pitch >= 6 {
		hi--
	}
	return lo, max(hi, lo+1)
}

// matrixIndexAt is the cell along a span from a to b holding p, or -1: the one whose edges
// (matrixEdges', the gap after a cell counting as part of it) enclose p.
func matrixIndexAt(p float32, n int, a, b float32) int {
	if n <= 0 || p < a || p >= b {
		return -1
	}
	i := min(int((p-a)/(b-a)*float32(n)), n-1)
	for i > 0 {
		if lo, _ := matrixEdges(i, n, a, b); p >= lo {
			break
		}
		i--
	}
	for i < n-1 {
		if lo, _ := matrixEdges(i+1, n, a, b); p < lo {
			break
		}
		i++
	}
	return i
}

// cellAt is the cell under pos, or (-1, -1).
func (g matrixGeom) cellAt(pos fyne.Position, rows, cols int) (int, int) {
	r := matrixIndexAt(pos.Y, rows, g.y0, g.y1)
	c := matrixIndexAt(pos.X, cols, g.x0, g.x1)
	if r < 0 || c < 0 {
		return -1, -1
	}
	return r, c
}

func (m *Matrix) refreshOverlays() {
	if m.r == nil {
		m.Refresh()
		return
	}
	m.r.Layout(m.Size())
	for _, o := range m.r.scene.objects {
		if o != fyne.CanvasObject(m.r.cells) && o != fyne.CanvasObject(m.r.scale) {
			canvas.Refresh(o)
		}
	}
}

// MinSize gives each cell a few units and room for the labels and scale.
func (m *Matrix) MinSize() fyne.Size {
	return fyne.NewSize(80+float32(max(m.cols, 1))*4, 40+float32(max(m.rows, 1))*4)
}

// CreateRenderer implements fyne.Widget.
func (m *Matrix) CreateRenderer() fyne.WidgetRenderer {
	m.ExtendBaseWidget(m)
	r := &matrixRenderer{m: m}
	r.cells = canvas.NewRaster(r.paintCells)
	r.scale = canvas.NewRaster(r.paintScale)
	r.chartRenderer = newChartRenderer(m, r.draw, r.style)
	m.r = r
	return r
}

// matrixRenderer is the chart renderer with the two rasters that paint the cells and the colour
// scale, and the theme's no-data colours they use.
type matrixRenderer struct {
	*chartRenderer
	m     *Matrix
	cells *canvas.Raster // every cell, in one image
	scale *canvas.Raster // the colour scale, top = largest
	grey  color.Color    // no-data colour, from the theme at the last Refresh
	hatch color.Color    // its diagonal hatching
}

// matrixHatch is the colour of the diagonal lines over no-data cells: the grey moved a
// little toward the foreground, so "no data" never reads as a dark colormap value.
func matrixHatch(grey, fg color.Color) color.NRGBA { return stripMix(grey, fg, 0.22) }

// matrixHatched reports whether pixel (x, y) of a no-data cell is on a hatch line, every
// period pixels along the diagonal.
func matrixHatched(x, y, period int) bool { return (x+y)%period == 0 }

func (r *matrixRenderer) Destroy() {
	if r.m.r == r {
		r.m.r = nil
	}
}

// style takes the no-data colours from the theme, at every Refresh (data or theme changed).
func (r *matrixRenderer) style() {
	th := r.m.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.grey = stripNeutral(th, v)
	r.hatch = matrixHatch(r.grey, stripThemeColor(th, theme.ColorNameForeground, v))
}

// paintCells draws the grid into a w x h pixel image covering the cell area; the cell edges
// are matrixEdges' in pixels, so they line up with the hit test at any scale.
func (r *matrixRenderer) paintCells(w, h int) image.Image {
	m := r.m
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	if m.rows == 0 || m.cols == 0 || w <= 0 || h <= 0 {
		return img
	}
	grey, hatch := r.grey, r.hatch
	if grey == nil || hatch == nil {
		grey, hatch = color.NRGBA{0x80, 0x80, 0x80, 0xff}, color.NRGBA{0x99, 0x99, 0x99, 0xff}
	}
	hc := stripNRGBA(hatch)
	// Gaps follow the logical cell size, so they are one unit wide at any scale.
	sz := r.cells.Size()
	sx, sy := float32(w)/max(sz.Width, 1), float32(h)/max(sz.Height, 1)
	period := max(int(math.Round(float64(6*sx))), 3)
	for row := 0; row < m.rows; row++ {
		y0, y1 := matrixEdges(row, m.rows, 0, sz.Height)
		py0, py1 := int(math.Round(float64(y0*sy))), int(math.Round(float64(y1*sy)))
		for col := 0; col < m.cols; col++ {
			x0, x1 := matrixEdges(col, m.cols, 0, sz.Width)
			px0, px1 := int(math.Round(float64(x0*sx))), int(math.Round(float64(x1*sx)))
			c := stripNRGBA(m.cellColor(row, col, grey))
			noData := !stripFinite(m.Value(row, col))
			for y := py0; y < py1 && y < h; y++ {
				off := img.PixOffset(px0, y)
				for x := px0; x < px1 && x < w; x++ {
					p := c
					if noData && matrixHatched(x, y, period) {
						p = hc
					}
					img.Pix[off], img.Pix[off+1], img.Pix[off+2], img.Pix[off+3] = p.R, p.G, p.B, p.A
					off += 4
				}
			}
		}
	}
	return img
}

// paintScale draws the colormap bottom (smallest) to top (largest).
func (r *matrixRenderer) paintScale(w, h int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		c := r.m.cm.At(1 - (float64(y)+0.5)/float64(h))
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// draw draws one frame: the cell raster, the indices and axis names, the colour scale and the
// hovered and selected cells' outlines.
func (r *matrixRenderer) draw(f *chartFrame) bool {
	m, size, sc, cs, fg, muted := r.m, f.size, f.sc, f.cs, f.fg, f.muted
	g := m.geom(size, f.th)
	if g.x1 <= g.x0 || g.y1 <= g.y0 {
		return false
	}
	if m.rows == 0 || m.cols == 0 {
		sc.text("no data", 0, 0, size.Width, size.Height, cs, muted, fyne.TextAlignCenter, false)
		return false
	}

	// Cells.
	if r.cells.Size() != fyne.NewSize(g.x1-g.x0, g.y1-g.y0) {
		r.cells.Resize(fyne.NewSize(g.x1-g.x0, g.y1-g.y0))
		canvas.Refresh(r.cells) // a raster's texture is kept until refreshed
	}
	r.cells.Move(fyne.NewPos(g.x0, g.y0))
	sc.add(r.cells)

	// Axis names: the column name centred over the grid, the row name above the row indices.
	selR, selC := m.Selected()
	sc.text(m.colLabel, g.x0, 0, g.x1-g.x0, g.textH, cs, muted, fyne.TextAlignCenter, false)
	sc.text(m.rowLabel, 0, g.textH+2, g.rowIdxW-6, g.textH, cs, muted, fyne.TextAlignTrailing, false)

	// Indices, thinned to fit; the selected row and column always shown, in bold.
	idx := func(n int, a, b, need float32, sel int, place func(i int, lo, hi float32, c color.Color, bold bool)) {
		pitch := (b - a) / float32(n)
		stride := 1
		for _, k := range []int{1, 2, 4, 5, 10, 20, 50, 100, 200, 500, 1000} {
			stride = k
			if float32(k)*pitch >= need {
				break
			}
		}
		for i := 0; i < n; i++ {
			near := sel >= 0 && i != sel && math.Abs(float64(i-sel))*float64(pitch) < float64(need)
			if i != sel && (i%stride != 0 || near) {
				continue
			}
			lo, hi := matrixEdges(i, n, a, b)
			if i == sel {
				place(i, lo, hi, fg, true)
			} else {
				place(i, lo, hi, muted, false)
			}
		}
	}
	colNeed := fyne.MeasureText(strconv.Itoa(m.cols-1), cs, fyne.TextStyle{Bold: true}).Width + 6
	idx(m.cols, g.x0, g.x1, colNeed, selC, func(i int, lo, hi float32, c color.Color, bold bool) {
		mid := (lo + hi) / 2
		sc.text(strconv.Itoa(i), mid-colNeed/2, g.textH+2, colNeed, g.textH, cs, c, fyne.TextAlignCenter, bold)
	})
	idx(m.rows, g.y0, g.y1, g.textH+1, selR, func(i int, lo, hi float32, c color.Color, bold bool) {
		mid := (lo + hi) / 2
		sc.text(strconv.Itoa(i), 0, mid-g.textH/2, g.rowIdxW-6, g.textH, cs, c, fyne.TextAlignTrailing, bold)
	})

	// Colour scale with its range.
	if m.lo <= m.hi {
		sh := g.y1 - g.y0
		if r.scale.Size() != fyne.NewSize(matrixScaleW, sh) {
			r.scale.Resize(fyne.NewSize(matrixScaleW, sh))
			canvas.Refresh(r.scale)
		}
		r.scale.Move(fyne.NewPos(g.scaleX, g.y0))
		sc.add(r.scale)
		lx := g.scaleX + matrixScaleW + 4
		sc.text(m.formatValue(m.hi), lx, g.y0, g.scaleLabelW, g.textH, cs, muted, fyne.TextAlignLeading, false)
		sc.text(m.formatValue(m.lo), lx, g.y1-g.textH, g.scaleLabelW, g.textH, cs, muted, fyne.TextAlignLeading, false)
	}

	// Hovered and selected cells, outlined outside their edges.
	cellBox := func(row, c int) (x, y, w, h float32) {
		x0, x1 := matrixEdges(c, m.cols, g.x0, g.x1)
		y0, y1 := matrixEdges(row, m.rows, g.y0, g.y1)
		return x0, y0, x1 - x0, y1 - y0
	}
	if hov := m.hovered; hov.row >= 0 && (hov.row != selR || hov.col != selC) {
		x, y, w, h := cellBox(hov.row, hov.col)
		sc.outline(x-0.5, y-0.5, w+1, h+1, stripWithAlpha(fg, 0xa0), 1)
	}
	if selR >= 0 {
		x, y, w, h := cellBox(selR, selC)
		sc.ring(x, y, w, h, fg, f.col(theme.ColorNameBackground))
	}

	if m.hovered.row >= 0 {
		f.tip, f.tipAt = m.HoverText(m.hovered.row, m.hovered.col), m.hoverAt
	}
	return true
}
