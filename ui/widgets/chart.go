// chart.go: what the pointer-driven charts share. Bars, Histogram and Matrix draw through one
// chartRenderer (a scene of pooled canvas objects that the chart's draw func fills each frame,
// the tooltip added last); Bars, BlockStrip, Histogram and Matrix follow the pointer with an
// embedded chartHover, and the clickable ones (Bars, BlockStrip, Matrix) take taps with a
// chartTap built on it, so hover and tap ask the chart's one hit test.
// Invariant: a frame shows exactly the objects its draw func added in that frame, in that
// order, with the tooltip last (on top of the chart). The mutation that would silently break
// it: not emptying the scene in begin (or adding the tooltip before drawing), which leaves the
// previous frame's hover band and tooltip on screen, or hides the tooltip under the bars.
package widgets

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
)

// chartScene hands out canvas objects in drawing order, reusing those of the previous frame,
// so a redraw (every pointer move) allocates nothing once warm.
type chartScene struct {
	rects   []*canvas.Rectangle
	texts   []*canvas.Text
	nr, nt  int
	objects []fyne.CanvasObject
}

func (sc *chartScene) begin() {
	sc.nr, sc.nt = 0, 0
	sc.objects = sc.objects[:0]
}

// rect adds a rectangle at (x, y) of size w x h filled with fill.
func (sc *chartScene) rect(x, y, w, h float32, fill color.Color) *canvas.Rectangle {
	if sc.nr == len(sc.rects) {
		sc.rects = append(sc.rects, canvas.NewRectangle(color.Transparent))
	}
	r := sc.rects[sc.nr]
	sc.nr++
	r.FillColor, r.StrokeColor, r.StrokeWidth, r.CornerRadius = fill, nil, 0, 0
	r.Move(fyne.NewPos(x, y))
	r.Resize(fyne.NewSize(w, h))
	r.Show()
	sc.objects = append(sc.objects, r)
	return r
}

// outline adds an unfilled rectangle with a stroke centred on its edge.
func (sc *chartScene) outline(x, y, w, h float32, stroke color.Color, width float32) *canvas.Rectangle {
	r := sc.rect(x, y, w, h, color.Transparent)
	r.StrokeColor, r.StrokeWidth = stroke, width
	return r
}

// text adds a label of the given size in box (x, y, w, h), aligned within it.
func (sc *chartScene) text(s string, x, y, w, h, size float32, c color.Color, align fyne.TextAlign, bold bool) *canvas.Text {
	if sc.nt == len(sc.texts) {
		sc.texts = append(sc.texts, canvas.NewText("", c))
	}
	t := sc.texts[sc.nt]
	sc.nt++
	t.Text, t.Color, t.TextSize, t.Alignment = s, c, size, align
	t.TextStyle = fyne.TextStyle{Bold: bold}
	t.Move(fyne.NewPos(x, y))
	t.Resize(fyne.NewSize(w, h))
	t.Show()
	sc.objects = append(sc.objects, t)
	return t
}

// ring outlines the box (x, y, w, h) twice: a 2-unit ring in outer just outside it and a
// 1-unit ring in inner just inside, so the mark shows on a cell of any colour.
func (sc *chartScene) ring(x, y, w, h float32, outer, inner color.Color) {
	sc.outline(x-1, y-1, w+2, h+2, outer, 2)
	if w > 4 && h > 4 {
		sc.outline(x+0.5, y+0.5, w-1, h-1, inner, 1)
	}
}

func (sc *chartScene) add(objs ...fyne.CanvasObject) { sc.objects = append(sc.objects, objs...) }

// chartWidget is a chart drawn by a chartRenderer.
type chartWidget interface {
	fyne.Widget
	Theme() fyne.Theme
}

// chartFrame is one frame as a chart's draw func sees it: the size, the theme in its current
// variant, the empty scene to draw into, and the tooltip to show on top, which the draw func
// sets (tip "" hides it).
type chartFrame struct {
	size      fyne.Size
	th        fyne.Theme
	v         fyne.ThemeVariant
	cs        float32     // caption text size
	fg, muted color.Color // the foreground and placeholder colours
	sc        *chartScene
	tip       string
	tipAt     fyne.Position // the pointer the tooltip keeps near
}

// col is the theme colour n in the frame's variant.
func (f *chartFrame) col(n fyne.ThemeColorName) color.Color { return stripThemeColor(f.th, n, f.v) }

// chartRenderer is the renderer of a chart drawn from scratch every frame: Layout empties the
// scene, lets draw fill it and adds the tooltip. draw returns false to leave the tooltip out of
// the frame (no room to draw, or nothing to point at).
type chartRenderer struct {
	w     chartWidget
	draw  func(f *chartFrame) bool
	style func() // what Refresh takes from the theme before drawing; may be nil
	scene chartScene
	tip   *stripTooltip
	frame chartFrame // reused, like the scene's objects
}

// newChartRenderer returns w's renderer with its first frame drawn. draw (and style) must
// reach the renderer through the frame only: it is not returned yet.
func newChartRenderer(w chartWidget, draw func(f *chartFrame) bool, style func()) *chartRenderer {
	r := &chartRenderer{w: w, draw: draw, style: style, tip: &stripTooltip{}}
	r.Refresh()
	return r
}

func (r *chartRenderer) Destroy() {}

func (r *chartRenderer) MinSize() fyne.Size { return r.w.MinSize() }

func (r *chartRenderer) Objects() []fyne.CanvasObject { return r.scene.objects }

// Refresh redraws the chart (data or theme changed).
func (r *chartRenderer) Refresh() {
	if r.style != nil {
		r.style()
	}
	r.Layout(r.w.Size())
	canvas.Refresh(r.w)
}

func (r *chartRenderer) Layout(size fyne.Size) {
	th := r.w.Theme()
	f := &r.frame
	*f = chartFrame{size: size, th: th, v: fyne.CurrentApp().Settings().ThemeVariant(), sc: &r.scene}
	f.cs = th.Size(theme.SizeNameCaptionText)
	f.fg, f.muted = f.col(theme.ColorNameForeground), f.col(theme.ColorNamePlaceHolder)
	r.scene.begin()
	if !r.draw(f) {
		return
	}
	if f.tip != "" {
		r.tip.style(th, f.v)
		r.tip.show(th, f.tip, f.tipAt, size)
	} else {
		r.tip.hide()
	}
	r.scene.add(r.tip.objects()...)
}

// chartHover follows the pointer over a chart for its tooltip: hovered is the item that hit
// puts under the pointer (none where there is none), hoverAt the pointer. Embedded in a chart
// it makes the chart desktop.Hoverable. Like the chart, it is used on the UI goroutine.
type chartHover[K comparable] struct {
	hovered K
	hoverAt fyne.Position
	none    K
	hit     func(fyne.Position) K // the chart's hit test, widget-local
	redraw  func()                // what a pointer move redraws
}

func newChartHover[K comparable](none K, hit func(fyne.Position) K, redraw func()) chartHover[K] {
	return chartHover[K]{hovered: none, none: none, hit: hit, redraw: redraw}
}

// MouseIn shows the tooltip of the item under the pointer.
func (h *chartHover[K]) MouseIn(ev *desktop.MouseEvent) { h.MouseMoved(ev) }

// MouseMoved follows the pointer with the tooltip; moves over nothing while nothing is hovered
// redraw nothing.
func (h *chartHover[K]) MouseMoved(ev *desktop.MouseEvent) {
	k := h.hit(ev.Position)
	if k == h.none && h.hovered == h.none {
		return
	}
	h.hovered, h.hoverAt = k, ev.Position
	h.redraw()
}

// MouseOut hides the tooltip.
func (h *chartHover[K]) MouseOut() {
	h.hovered = h.none
	h.redraw()
}

// chartTap is a chartHover that also selects the item a tap hits (the same hit test): selected
// is that item, or what the chart's SetSelected set. Embedded in a chart it makes the chart
// fyne.Tappable and desktop.Cursorable.
type chartTap[K comparable] struct {
	chartHover[K]
	selected  K
	onSelect  func(K) // may be nil
	redrawSel func()  // what a new selection redraws
}

func newChartTap[K comparable](h chartHover[K], redrawSel func(), onSelect func(K)) chartTap[K] {
	return chartTap[K]{chartHover: h, selected: h.none, onSelect: onSelect, redrawSel: redrawSel}
}

// Tapped selects the item under the pointer and reports it; a tap on no item does nothing.
func (t *chartTap[K]) Tapped(ev *fyne.PointEvent) {
	k := t.hit(ev.Position)
	if k == t.none {
		return
	}
	t.selected = k
	t.redrawSel()
	if t.onSelect != nil {
		t.onSelect(k)
	}
}

// Cursor is the pointing hand: the chart's items are clickable.
func (t *chartTap[K]) Cursor() desktop.Cursor { return desktop.PointerCursor }
