// attnmatrix.go: a dense matrix of values (an attention matrix, possibly max-pooled) drawn as
// one image, one cell per value, with a marked row (the query), a hover report and a drag
// that selects a rectangle of cells to zoom into.
//
// Invariant: vals is row-major, cell (r, c) is vals[r*cols+c], drawn at row r from the top
// and column c from the left, and the hit test (hover, drag) uses the same cell edges as the
// painter. The mutation that would silently break it: painting vals[c*rows+r] (column-major):
// every cell still gets a colour, the transpose's — for attention, "who attends to whom" read
// backwards.
package widgets

import (
	"image"
	"image/color"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// MatrixView shows a rows x cols matrix of values through a colormap and Scale.
//
// Setters may be called from the UI goroutine only; OnZoom and OnHover run there.
type MatrixView struct {
	widget.BaseWidget
	OnZoom  func(r0, r1, c0, c1 int) // a drag over cells [r0, r1) x [c0, c1)
	OnHover func(r, c int)           // the cell under the pointer; -1, -1 when it leaves

	mu         sync.Mutex
	rows, cols int
	vals       []float32
	img        *image.RGBA // one pixel per cell
	markRow    int
	dragFrom   fyne.Position
	dragTo     fyne.Position
	dragging   bool
	hovered    [2]int
}

// NewMatrixView returns an empty view.
func NewMatrixView() *MatrixView {
	m := &MatrixView{markRow: -1, hovered: [2]int{-1, -1}}
	m.ExtendBaseWidget(m)
	return m
}

// SetData shows vals (rows x cols, row-major) coloured cm.At(sc.Norm(v)); NaN cells grey.
func (m *MatrixView) SetData(rows, cols int, vals []float32, cm Colormap, sc Scale) {
	img := image.NewRGBA(image.Rect(0, 0, max(cols, 1), max(rows, 1)))
	for r := range rows {
		for c := range cols {
			col := color.NRGBA{90, 90, 96, 255}
			if i := r*cols + c; i < len(vals) {
				if cc := cm.At(sc.Norm(vals[i])); cc.A != 0 {
					col = cc
				}
			}
			img.SetRGBA(c, r, color.RGBA(col))
		}
	}
	ivLocked(&m.mu, m, func() {
		m.rows, m.cols, m.vals, m.img = rows, cols, vals, img
		if m.markRow >= rows {
			m.markRow = -1
		}
	})
}

// SetMarkedRow outlines row r (the query's); -1 clears it.
func (m *MatrixView) SetMarkedRow(r int) {
	ivLocked(&m.mu, m, func() { m.markRow = r })
}

// Image is the matrix as painted, one pixel per cell (nil before SetData).
func (m *MatrixView) Image() image.Image {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.img
}

// mvGeom is where the cells lie: the matrix letterboxed in size, cells of equal size.
type mvGeom struct {
	x0, y0, w, h float32
	rows, cols   int
}

func mvGeometry(size fyne.Size, rows, cols int) mvGeom {
	if rows <= 0 || cols <= 0 || size.Width <= 0 || size.Height <= 0 {
		return mvGeom{}
	}
	cell := min(size.Width/float32(cols), size.Height/float32(rows))
	w, h := cell*float32(cols), cell*float32(rows)
	return mvGeom{(size.Width - w) / 2, (size.Height - h) / 2, w, h, rows, cols}
}

// cellAt is the cell under p, clamped into the matrix when clamp, else (-1, -1) outside.
func (g mvGeom) cellAt(p fyne.Position, clamp bool) (int, int) {
	if g.rows == 0 {
		return -1, -1
	}
	c := int(math.Floor(float64((p.X - g.x0) / g.w * float32(g.cols))))
	r := int(math.Floor(float64((p.Y - g.y0) / g.h * float32(g.rows))))
	if clamp {
		return min(max(r, 0), g.rows-1), min(max(c, 0), g.cols-1)
	}
	if r < 0 || c < 0 || r >= g.rows || c >= g.cols {
		return -1, -1
	}
	return r, c
}

// cellRect is cell (r, c)'s rectangle.
func (g mvGeom) cellRect(r, c int) (fyne.Position, fyne.Size) {
	cw, ch := g.w/float32(g.cols), g.h/float32(g.rows)
	return fyne.NewPos(g.x0+float32(c)*cw, g.y0+float32(r)*ch), fyne.NewSize(cw, ch)
}

// CellAt is the cell under a widget-local position, (-1, -1) outside the matrix.
func (m *MatrixView) CellAt(p fyne.Position) (r, c int) {
	m.mu.Lock()
	g := mvGeometry(m.Size(), m.rows, m.cols)
	m.mu.Unlock()
	return g.cellAt(p, false)
}

// CellCentre is the centre of cell (r, c), for tests and tools.
func (m *MatrixView) CellCentre(r, c int) fyne.Position {
	m.mu.Lock()
	g := mvGeometry(m.Size(), m.rows, m.cols)
	m.mu.Unlock()
	p, s := g.cellRect(r, c)
	return p.AddXY(s.Width/2, s.Height/2)
}

// Dragged implements fyne.Draggable: the rectangle from where the drag began.
func (m *MatrixView) Dragged(ev *fyne.DragEvent) {
	m.mu.Lock()
	if !m.dragging {
		m.dragging = true
		m.dragFrom = ev.Position.Subtract(ev.Dragged)
	}
	m.dragTo = ev.Position
	m.mu.Unlock()
	m.Refresh()
}

// DragEnd implements fyne.Draggable: reports the cells the rectangle touches.
func (m *MatrixView) DragEnd() {
	m.mu.Lock()
	g := mvGeometry(m.Size(), m.rows, m.cols)
	from, to, was := m.dragFrom, m.dragTo, m.dragging
	m.dragging = false
	m.mu.Unlock()
	m.Refresh()
	if !was || g.rows == 0 {
		return
	}
	r0, c0 := g.cellAt(from, true)
	r1, c1 := g.cellAt(to, true)
	if r0 > r1 {
		r0, r1 = r1, r0
	}
	if c0 > c1 {
		c0, c1 = c1, c0
	}
	if f := m.OnZoom; f != nil {
		f(r0, r1+1, c0, c1+1)
	}
}

// MouseIn implements desktop.Hoverable.
func (m *MatrixView) MouseIn(ev *desktop.MouseEvent) { m.hover(ev.Position) }

// MouseMoved implements desktop.Hoverable.
func (m *MatrixView) MouseMoved(ev *desktop.MouseEvent) { m.hover(ev.Position) }

// MouseOut implements desktop.Hoverable.
func (m *MatrixView) MouseOut() { m.report(-1, -1) }

func (m *MatrixView) hover(p fyne.Position) { m.report(m.CellAt(p)) }

func (m *MatrixView) report(r, c int) {
	m.mu.Lock()
	changed := m.hovered != [2]int{r, c}
	m.hovered = [2]int{r, c}
	m.mu.Unlock()
	if f := m.OnHover; changed && f != nil {
		f(r, c)
	}
}

// MinSize is a small square.
func (m *MatrixView) MinSize() fyne.Size { return fyne.NewSize(120, 120) }

// CreateRenderer implements fyne.Widget.
func (m *MatrixView) CreateRenderer() fyne.WidgetRenderer {
	m.ExtendBaseWidget(m)
	r := &mvRenderer{m: m}
	r.bg = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	r.img = &canvas.Image{FillMode: canvas.ImageFillStretch, ScaleMode: canvas.ImageScalePixels}
	r.mark = canvas.NewRectangle(color.Transparent)
	r.mark.StrokeColor = color.White
	r.mark.StrokeWidth = 1
	r.sel = canvas.NewRectangle(color.NRGBA{255, 255, 255, 40})
	r.sel.StrokeColor = color.White
	r.sel.StrokeWidth = 1
	r.objects = []fyne.CanvasObject{r.bg, r.img, r.mark, r.sel}
	r.Refresh()
	return r
}

type mvRenderer struct {
	m       *MatrixView
	bg      *canvas.Rectangle
	img     *canvas.Image
	mark    *canvas.Rectangle
	sel     *canvas.Rectangle
	objects []fyne.CanvasObject
}

func (r *mvRenderer) Destroy() {}

func (r *mvRenderer) MinSize() fyne.Size { return r.m.MinSize() }

func (r *mvRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *mvRenderer) Layout(size fyne.Size) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	r.bg.Resize(size)
	g := mvGeometry(size, m.rows, m.cols)
	r.img.Hidden = g.rows == 0
	r.img.Move(fyne.NewPos(g.x0, g.y0))
	r.img.Resize(fyne.NewSize(g.w, g.h))
	r.mark.Hidden = m.markRow < 0 || g.rows == 0
	if !r.mark.Hidden {
		p, s := g.cellRect(m.markRow, 0)
		r.mark.Move(p.AddXY(0, -1))
		r.mark.Resize(fyne.NewSize(g.w, s.Height+2))
	}
	r.sel.Hidden = !m.dragging
	if m.dragging {
		a, b := m.dragFrom, m.dragTo
		r.sel.Move(fyne.NewPos(min(a.X, b.X), min(a.Y, b.Y)))
		r.sel.Resize(fyne.NewSize(float32(math.Abs(float64(a.X-b.X))), float32(math.Abs(float64(a.Y-b.Y)))))
	}
}

func (r *mvRenderer) Refresh() {
	m := r.m
	m.mu.Lock()
	if m.img != nil {
		r.img.Image = m.img
	}
	m.mu.Unlock()
	r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.Layout(m.Size())
	r.img.Refresh()
	canvas.Refresh(m)
}

var (
	_ fyne.Draggable    = (*MatrixView)(nil)
	_ desktop.Hoverable = (*MatrixView)(nil)
)
