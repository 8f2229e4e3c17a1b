// blockstrip.go: the block strip, one cell per vision block, coloured by a per-block value.
// Invariant: drawing and hit-testing share one geometry (stripCellX), so the cell a user sees
// under the pointer is the block that a tap selects and the tooltip names. The mutation that
// would silently break it: computing the tapped index as x/cellWidth while the cells are laid
// out with gaps (or rounded edges), which selects the neighbour near the right end of a long strip.
//
// This file also holds the few drawing helpers the charts in this package share (tooltip,
// theme colours, ink on a coloured cell); they carry the strip prefix to keep the package's
// top-level names apart from those of other files.
package widgets

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// BlockStrip shows one cell per block in a row, coloured by a value through a colormap
// (time, or how much the block changed the activations). Blocks with a NaN value (not run
// yet) are drawn neutral grey. A tap selects a block (outlined), the block running now or
// next is underlined, marked blocks (a windowed block: it attends within windows, not the whole
// image) carry a bar across their top, hovering shows a tooltip.
//
// Like every Fyne widget it is changed on the UI goroutine; elsewhere wrap calls in fyne.Do.
type BlockStrip struct {
	widget.BaseWidget
	chartTap[int] // the block under the pointer and the outlined one; -1: none

	tooltip func(block int) string

	vals    []float64
	marked  []bool // per block: the top bar (SetMarked)
	cm      Colormap
	lo, hi  float64 // range of the finite values, for the colormap
	current int
}

var (
	_ fyne.Tappable      = (*BlockStrip)(nil)
	_ desktop.Hoverable  = (*BlockStrip)(nil)
	_ desktop.Cursorable = (*BlockStrip)(nil)
)

// Geometry of the strip, in Fyne units.
const (
	stripTop       = 2  // room above the cells for the selection outline
	stripMarkerH   = 3  // height of the "running now / next" underline
	stripMarkerGap = 3  // space between a cell and its underline
	stripMinCellW  = 6  // narrowest cell MinSize asks for
	stripMinCellH  = 22 // shortest cell MinSize asks for
	stripBarH      = 3  // height of a marked cell's bar
)

// NewBlockStrip returns an empty strip; onSelect (may be nil) is called with the tapped block.
func NewBlockStrip(onSelect func(block int)) *BlockStrip {
	s := &BlockStrip{current: -1}
	hit := func(p fyne.Position) int { return stripCellAt(p.X, len(s.vals), s.Size().Width) }
	s.chartTap = newChartTap(newChartHover(-1, hit, s.Refresh), s.Refresh, onSelect)
	s.ExtendBaseWidget(s)
	return s
}

// SetValues sets one value per block (len = depth) and the colormap; NaN (or ±Inf) means the
// block has not run yet. Colours span the range of the finite values; a flat range is mid-map.
func (s *BlockStrip) SetValues(vals []float64, cm Colormap) {
	s.vals = append(s.vals[:0], vals...)
	s.cm = cm
	s.lo, s.hi = math.Inf(1), math.Inf(-1)
	for _, v := range s.vals {
		if stripFinite(v) {
			s.lo = math.Min(s.lo, v)
			s.hi = math.Max(s.hi, v)
		}
	}
	if s.hovered >= len(s.vals) {
		s.hovered = -1
	}
	s.Refresh()
}

// SetMarked marks the blocks whose entry is true with a bar across the top of the cell (nil:
// none), e.g. the windowed blocks of a tower with window attention.
func (s *BlockStrip) SetMarked(marked []bool) {
	s.marked = append(s.marked[:0], marked...)
	s.Refresh()
}

// Marked says whether block i carries the bar.
func (s *BlockStrip) Marked(i int) bool { return i >= 0 && i < len(s.marked) && s.marked[i] }

// SetSelected outlines block (-1 or out of range: none). It does not call onSelect.
func (s *BlockStrip) SetSelected(block int) {
	s.selected = block
	s.Refresh()
}

// SetCurrent marks the block running now or next (-1: none).
func (s *BlockStrip) SetCurrent(block int) {
	s.current = block
	s.Refresh()
}

// SetTooltip sets the hover text of a block; nil restores the default ("block 7 · 0.412").
func (s *BlockStrip) SetTooltip(f func(block int) string) {
	s.tooltip = f
	s.Refresh()
}

// Selected returns the outlined block, -1 if none.
func (s *BlockStrip) Selected() int {
	if s.selected < 0 || s.selected >= len(s.vals) {
		return -1
	}
	return s.selected
}

// TooltipText is what hovering block says.
func (s *BlockStrip) TooltipText(block int) string {
	if block < 0 || block >= len(s.vals) {
		return ""
	}
	if s.tooltip != nil {
		return s.tooltip(block)
	}
	if v := s.vals[block]; stripFinite(v) {
		return fmt.Sprintf("block %d · %s", block, stripFormat3(v))
	}
	return fmt.Sprintf("block %d · not run yet", block)
}

// cellColor is the fill of block i: the colormap for a finite value, neutral grey otherwise.
func (s *BlockStrip) cellColor(th fyne.Theme, v fyne.ThemeVariant, i int) color.Color {
	x := s.vals[i]
	if !stripFinite(x) {
		return stripNeutral(th, v)
	}
	return s.cm.At(Normalize(float32(x), float32(s.lo), float32(s.hi)))
}

// stripCellX returns the left edge and width of cell i of n in a strip w wide. Edges are
// whole units so neighbouring cells never overlap or leave uneven gaps.
func stripCellX(i, n int, w float32) (x, width float32) {
	if n <= 0 {
		return 0, 0
	}
	pitch := w / float32(n)
	gap := float32(0)
	switch {
	case pitch >= 12:
		gap = 2
	case pitch >= 5:
		gap = 1
	}
	x0 := float32(math.Round(float64(float32(i) * pitch)))
	x1 := float32(math.Round(float64(float32(i+1) * pitch)))
	return x0, max(x1-x0-gap, 1)
}

// stripCellAt returns the cell under x, or -1.
func stripCellAt(x float32, n int, w float32) int {
	if n <= 0 || w <= 0 || x < 0 || x >= w {
		return -1
	}
	for i := int(x * float32(n) / w); i >= 0 && i < n; {
		x0, _ := stripCellX(i, n, w)
		x1, _ := stripCellX(i+1, n, w)
		switch {
		case x < x0:
			i--
		case i+1 < n && x >= x1:
			i++
		default:
			return i
		}
	}
	return -1
}

// stripCellHeight is the height of the cells in a strip h tall.
func stripCellHeight(h float32) float32 {
	return max(h-stripTop-stripMarkerH-stripMarkerGap, 1)
}

// MinSize fits a narrow cell per block and a label's height.
func (s *BlockStrip) MinSize() fyne.Size {
	n := max(len(s.vals), 1)
	return fyne.NewSize(float32(n)*stripMinCellW, stripTop+stripMinCellH+stripMarkerH+stripMarkerGap)
}

// CreateRenderer implements fyne.Widget.
func (s *BlockStrip) CreateRenderer() fyne.WidgetRenderer {
	s.ExtendBaseWidget(s)
	r := &stripRenderer{s: s, tip: &stripTooltip{}}
	r.selection = canvas.NewRectangle(color.Transparent)
	r.selInner = canvas.NewRectangle(color.Transparent)
	r.hover = canvas.NewRectangle(color.Transparent)
	r.marker = canvas.NewRectangle(color.Transparent)
	r.Refresh()
	return r
}

type stripRenderer struct {
	s         *BlockStrip
	cells     []*canvas.Rectangle
	bars      []*canvas.Rectangle // the marks (SetMarked), one per cell, hidden where unmarked
	labels    []*canvas.Text
	hover     *canvas.Rectangle
	selection *canvas.Rectangle // a ring in the foreground colour just outside the cell
	selInner  *canvas.Rectangle // and one in the background colour just inside it
	marker    *canvas.Rectangle
	tip       *stripTooltip
	objects   []fyne.CanvasObject
}

func (r *stripRenderer) Destroy() {}

func (r *stripRenderer) MinSize() fyne.Size { return r.s.MinSize() }

func (r *stripRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *stripRenderer) Layout(size fyne.Size) {
	s := r.s
	n := len(r.cells)
	th := s.Theme()
	ch := stripCellHeight(size.Height)
	labelSize := th.Size(theme.SizeNameCaptionText)
	// Labels only where every index fits inside its own cell: a label spilling over a
	// neighbour of another colour is harder to read than none (the tooltip names the block).
	widest := fyne.MeasureText(fmt.Sprint(max(n-1, 0)), labelSize, fyne.TextStyle{})
	_, cw := stripCellX(0, n, size.Width)
	showLabels := widest.Height <= ch && widest.Width+2 <= cw
	for i, c := range r.cells {
		x, w := stripCellX(i, n, size.Width)
		c.Move(fyne.NewPos(x, stripTop))
		c.Resize(fyne.NewSize(w, ch))
		l := r.labels[i]
		l.Move(fyne.NewPos(x, stripTop))
		l.Resize(fyne.NewSize(w, ch))
		l.Hidden = !showLabels
		b := r.bars[i]
		b.Move(fyne.NewPos(x+1, stripTop+1))
		b.Resize(fyne.NewSize(max(w-2, 1), stripBarH))
		b.Hidden = !s.Marked(i)
	}
	place := func(o *canvas.Rectangle, i int, grow float32) {
		if i < 0 || i >= n {
			o.Hide()
			return
		}
		x, w := stripCellX(i, n, size.Width)
		o.Move(fyne.NewPos(x-grow, stripTop-grow))
		o.Resize(fyne.NewSize(w+2*grow, ch+2*grow))
		o.Show()
	}
	place(r.hover, s.hovered, 0)
	place(r.selection, s.selected, 1)
	place(r.selInner, s.selected, -0.5)
	if s.current >= 0 && s.current < n {
		x, w := stripCellX(s.current, n, size.Width)
		r.marker.Move(fyne.NewPos(x, stripTop+ch+stripMarkerGap))
		r.marker.Resize(fyne.NewSize(w, stripMarkerH))
		r.marker.Show()
	} else {
		r.marker.Hide()
	}
	if s.hovered >= 0 && s.hovered < n {
		r.tip.show(th, s.TooltipText(s.hovered), s.hoverAt, size)
	} else {
		r.tip.hide()
	}

	r.objects = r.objects[:0]
	for i := range r.cells {
		r.objects = append(r.objects, r.cells[i], r.bars[i], r.labels[i])
	}
	r.objects = append(r.objects, r.hover, r.selection, r.selInner, r.marker)
	r.objects = append(r.objects, r.tip.objects()...)
}

func (r *stripRenderer) Refresh() {
	s := r.s
	th := s.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	n := len(s.vals)
	for len(r.cells) < n {
		c := canvas.NewRectangle(color.Transparent)
		c.CornerRadius = 2
		l := canvas.NewText(fmt.Sprint(len(r.cells)), color.Black)
		l.Alignment = fyne.TextAlignCenter
		r.cells = append(r.cells, c)
		r.bars = append(r.bars, canvas.NewRectangle(color.Transparent))
		r.labels = append(r.labels, l)
	}
	r.cells, r.bars, r.labels = r.cells[:n], r.bars[:n], r.labels[:n]
	labelSize := th.Size(theme.SizeNameCaptionText)
	for i, c := range r.cells {
		fill := s.cellColor(th, v, i)
		c.FillColor = fill
		l := r.labels[i]
		l.TextSize = labelSize
		l.Color = stripInkOn(fill)
		r.bars[i].FillColor = stripInkOn(fill) // the label's ink: it reads on any cell colour
	}
	fg := stripThemeColor(th, theme.ColorNameForeground, v)
	r.selection.FillColor = color.Transparent
	r.selection.StrokeColor = fg
	r.selection.StrokeWidth = 2
	r.selection.CornerRadius = 3
	r.selInner.FillColor = color.Transparent
	r.selInner.StrokeColor = stripThemeColor(th, theme.ColorNameBackground, v)
	r.selInner.StrokeWidth = 1
	r.selInner.CornerRadius = 2
	r.hover.FillColor = color.Transparent
	r.hover.StrokeColor = stripWithAlpha(fg, 0x70)
	r.hover.StrokeWidth = 1
	r.hover.CornerRadius = 2
	r.marker.FillColor = stripThemeColor(th, theme.ColorNamePrimary, v)
	r.marker.CornerRadius = 1
	r.tip.style(th, v)
	r.Layout(s.Size())
	canvas.Refresh(s)
}

// stripFormat3 formats v with about three significant digits (12.3, 0.884, -1, 1234).
func stripFormat3(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1e5 || a < 1e-3:
		return fmt.Sprintf("%.2e", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func stripFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// stripThemeColor looks a colour up in th for variant v.
func stripThemeColor(th fyne.Theme, n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	return th.Color(n, v)
}

// stripNeutral is the grey of "no data / not run yet" cells in this theme.
func stripNeutral(th fyne.Theme, v fyne.ThemeVariant) color.Color {
	return stripThemeColor(th, theme.ColorNameDisabled, v)
}

// stripNRGBA converts any colour to non-premultiplied 8-bit RGBA.
func stripNRGBA(c color.Color) color.NRGBA {
	if c == nil {
		return color.NRGBA{}
	}
	return color.NRGBAModel.Convert(c).(color.NRGBA)
}

func stripWithAlpha(c color.Color, a uint8) color.NRGBA {
	n := stripNRGBA(c)
	n.A = uint8(uint16(n.A) * uint16(a) / 255)
	return n
}

// stripMix returns a*(1-t) + b*t, opaque.
func stripMix(a, b color.Color, t float64) color.NRGBA {
	x, y := stripNRGBA(a), stripNRGBA(b)
	m := func(p, q uint8) uint8 { return uint8(math.Round(float64(p)*(1-t) + float64(q)*t)) }
	return color.NRGBA{m(x.R, y.R), m(x.G, y.G), m(x.B, y.B), 255}
}

// stripLuminance is the relative luminance Y of an sRGB colour (D65): 0 black, 1 white.
func stripLuminance(c color.NRGBA) float64 {
	lin := func(u uint8) float64 {
		f := float64(u) / 255
		if f <= 0.04045 {
			return f / 12.92
		}
		return math.Pow((f+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

// stripInkOn picks black or white text, whichever reads better on fill.
func stripInkOn(fill color.Color) color.Color {
	if stripLuminance(stripNRGBA(fill)) > 0.22 {
		return color.NRGBA{0x10, 0x10, 0x10, 0xff}
	}
	return color.NRGBA{0xf8, 0xf8, 0xf8, 0xff}
}

// stripTooltip is a small bordered box of text lines drawn by a chart's own renderer (an
// overlay would take the pointer away from the chart and make the tooltip flicker).
type stripTooltip struct {
	bg      *canvas.Rectangle
	lines   []*canvas.Text
	visible bool
}

func (t *stripTooltip) style(th fyne.Theme, v fyne.ThemeVariant) {
	if t.bg == nil {
		t.bg = canvas.NewRectangle(color.Transparent)
	}
	t.bg.FillColor = stripThemeColor(th, theme.ColorNameOverlayBackground, v)
	t.bg.StrokeColor = stripThemeColor(th, theme.ColorNameInputBorder, v)
	t.bg.StrokeWidth = 1
	t.bg.CornerRadius = 4
	for _, l := range t.lines {
		l.Color = stripThemeColor(th, theme.ColorNameForeground, v)
	}
}

// show lays the text out near the pointer p, inside area where it fits (to the right of and
// above the pointer by preference, so it never covers what is pointed at).
func (t *stripTooltip) show(th fyne.Theme, text string, p fyne.Position, area fyne.Size) {
	if text == "" {
		t.hide()
		return
	}
	if t.bg == nil {
		t.style(th, fyne.CurrentApp().Settings().ThemeVariant())
	}
	rows := strings.Split(text, "\n")
	size := th.Size(theme.SizeNameText) - 2
	pad := th.Size(theme.SizeNameInnerPadding) / 2
	fg := stripThemeColor(th, theme.ColorNameForeground, fyne.CurrentApp().Settings().ThemeVariant())
	for len(t.lines) < len(rows) {
		t.lines = append(t.lines, canvas.NewText("", fg))
	}
	t.lines = t.lines[:len(rows)]
	var w, h float32
	lineH := make([]float32, len(rows))
	for i, row := range rows {
		l := t.lines[i]
		l.Text, l.TextSize, l.Color = row, size, fg
		m := l.MinSize()
		w = max(w, m.Width)
		lineH[i] = m.Height
		h += m.Height
	}
	box := fyne.NewSize(w+2*pad, h+2*pad)
	const gap = 12
	x := p.X + gap
	if x+box.Width > area.Width {
		x = p.X - gap - box.Width
	}
	x = max(min(x, area.Width-box.Width), 0)
	y := p.Y - gap - box.Height
	if y < 0 {
		y = p.Y + gap
	}
	y = max(min(y, area.Height-box.Height), 0)
	x, y = float32(math.Round(float64(x))), float32(math.Round(float64(y)))
	t.bg.Move(fyne.NewPos(x, y))
	t.bg.Resize(box)
	ly := y + pad
	for i, l := range t.lines {
		l.Move(fyne.NewPos(x+pad, ly))
		l.Resize(fyne.NewSize(w, lineH[i]))
		ly += lineH[i]
	}
	t.visible = true
}

func (t *stripTooltip) hide() { t.visible = false }

// objects is what to draw, last (on top of the chart); nothing when hidden.
func (t *stripTooltip) objects() []fyne.CanvasObject {
	if !t.visible || t.bg == nil {
		return nil
	}
	out := []fyne.CanvasObject{t.bg}
	for _, l := range t.lines {
		out = append(out, l)
	}
	return out
}

// text is the tooltip's text as shown, lines joined by "\n" ("" when hidden).
func (t *stripTooltip) text() string {
	if !t.visible {
		return ""
	}
	parts := make([]string, len(t.lines))
	for i, l := range t.lines {
		parts[i] = l.Text
	}
	return strings.Join(parts, "\n")
}
