package ui

// tooltip.go: tooltips for any control. Fyne 2.7 has none, and hover goes to the deepest
// desktop.Hoverable under the pointer, so a plain wrapper around a button never hears of it.
// withTip puts a transparent hover catcher on top of the control: the driver picks it for
// hover (it is drawn last) but not for taps, focus, scrolling or the cursor (it is none of
// those), so the control under it works as before; the catcher passes MouseIn/Moved/Out
// on to the control (its hover highlight stays) and shows the tip, after a short delay,
// in the tip layer: the top of the window's content (tipRoot), which takes no events.
//
// Invariant: a tipped control receives every tap, focus and key it would receive untipped;
// the mutation that would silently break it: making the catcher Tappable (to show the tip
// on click, say) — the driver would then pick it over the button and every click would die.

import (
	"image/color"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// tipDelay is how long the pointer rests on a control before its tip shows (0: at once).
var tipDelay = 500 * time.Millisecond

const tipMaxWidth = 380

// withTip returns o with a tooltip; o keeps its own behaviour.
func withTip(o fyne.CanvasObject, text string) *tipped {
	t := &tipped{child: o, text: text}
	t.catcher = &tipCatcher{owner: t}
	t.catcher.ExtendBaseWidget(t.catcher)
	t.ExtendBaseWidget(t)
	return t
}

// tipped is a control and the hover catcher above it.
type tipped struct {
	widget.BaseWidget
	child   fyne.CanvasObject
	catcher *tipCatcher
	text    string
}

// Tip is the tooltip's text.
func (t *tipped) Tip() string { return t.text }

// SetTip changes the tooltip's text.
func (t *tipped) SetTip(s string) { t.text = s }

func (t *tipped) CreateRenderer() fyne.WidgetRenderer {
	return &tippedRenderer{t: t}
}

type tippedRenderer struct{ t *tipped }

func (r *tippedRenderer) Layout(s fyne.Size) {
	for _, o := range r.Objects() {
		o.Move(fyne.Position{})
		o.Resize(s)
	}
}
func (r *tippedRenderer) MinSize() fyne.Size { return r.t.child.MinSize() }
func (r *tippedRenderer) Refresh()           { r.t.child.Refresh() }
func (r *tippedRenderer) Destroy()           {}
func (r *tippedRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.t.child, r.t.catcher}
}

// tipCatcher is Hoverable and nothing else.
type tipCatcher struct {
	widget.BaseWidget
	owner *tipped
	timer *time.Timer
	seq   int // drops a timer that fired after the pointer left
}

func (c *tipCatcher) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(color.Transparent))
}

func (c *tipCatcher) hoverable() desktop.Hoverable {
	h, _ := c.owner.child.(desktop.Hoverable)
	return h
}

func (c *tipCatcher) MouseIn(ev *desktop.MouseEvent) {
	if h := c.hoverable(); h != nil {
		h.MouseIn(ev)
	}
	c.seq++
	seq, at := c.seq, ev.AbsolutePosition
	if tipDelay == 0 {
		c.show(at)
		return
	}
	c.timer = time.AfterFunc(tipDelay, func() {
		fyne.Do(func() {
			if seq == c.seq {
				c.show(at)
			}
		})
	})
}

func (c *tipCatcher) MouseMoved(ev *desktop.MouseEvent) {
	if h := c.hoverable(); h != nil {
		h.MouseMoved(ev)
	}
}

func (c *tipCatcher) MouseOut() {
	if h := c.hoverable(); h != nil {
		h.MouseOut()
	}
	c.seq++
	if c.timer != nil {
		c.timer.Stop()
	}
	if l := tipLayerOf(c); l != nil {
		l.hide()
	}
}

func (c *tipCatcher) show(at fyne.Position) {
	if l := tipLayerOf(c); l != nil && c.owner.text != "" && c.Visible() {
		l.show(c.owner.text, at)
	}
}

// tipLayerOf finds the tip layer of the window o is in (nil outside a tipRoot).
func tipLayerOf(o fyne.CanvasObject) *tipLayer {
	app := fyne.CurrentApp()
	if app == nil {
		return nil
	}
	c := app.Driver().CanvasForObject(o)
	if c == nil {
		return nil
	}
	if r, ok := c.Content().(*tipRoot); ok {
		return r.layer
	}
	return nil
}

// tipRoot is a window's content with the tip layer over it.
type tipRoot struct {
	widget.BaseWidget
	content fyne.CanvasObject
	layer   *tipLayer
}

func newTipRoot(content fyne.CanvasObject) *tipRoot {
	r := &tipRoot{content: content, layer: newTipLayer()}
	r.ExtendBaseWidget(r)
	return r
}

func (r *tipRoot) CreateRenderer() fyne.WidgetRenderer { return &tipRootRenderer{r} }

type tipRootRenderer struct{ r *tipRoot }

func (rr *tipRootRenderer) Layout(s fyne.Size) {
	rr.r.content.Move(fyne.Position{})
	rr.r.content.Resize(s)
	rr.r.layer.Move(fyne.Position{})
	rr.r.layer.Resize(s)
}
func (rr *tipRootRenderer) MinSize() fyne.Size { return rr.r.content.MinSize() } // never the tip's
func (rr *tipRootRenderer) Refresh()           { rr.r.content.Refresh() }
func (rr *tipRootRenderer) Destroy()           {}
func (rr *tipRootRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{rr.r.content, rr.r.layer}
}

// tipLayer draws one tip box at a position; it has no event interfaces at all.
type tipLayer struct {
	widget.BaseWidget
	bg    *canvas.Rectangle
	lines []*canvas.Text
	text  string
}

func newTipLayer() *tipLayer {
	l := &tipLayer{bg: canvas.NewRectangle(color.Transparent)}
	l.ExtendBaseWidget(l)
	l.bg.Hide()
	return l
}

// Text is the tip shown ("" when none).
func (l *tipLayer) Text() string { return l.text }

func (l *tipLayer) show(text string, at fyne.Position) {
	l.text = text
	size := theme.CaptionTextSize()
	pad := theme.InnerPadding() / 2
	var lines []*canvas.Text
	var w float32
	for _, s := range wrapText(text, tipMaxWidth, size) {
		t := canvas.NewText(s, theme.Color(theme.ColorNameForeground))
		t.TextSize = size
		w = max(w, t.MinSize().Width)
		lines = append(lines, t)
	}
	if len(lines) == 0 {
		l.hide()
		return
	}
	lineH := lines[0].MinSize().Height
	box := fyne.NewSize(w+2*pad, lineH*float32(len(lines))+2*pad)
	origin := l.place(at, box)
	l.bg.FillColor = theme.Color(theme.ColorNameOverlayBackground)
	l.bg.StrokeColor = theme.Color(theme.ColorNameInputBorder)
	l.bg.StrokeWidth = 1
	l.bg.CornerRadius = theme.InputRadiusSize()
	l.bg.Move(origin)
	l.bg.Resize(box)
	l.bg.Show()
	for i, t := range lines {
		t.Move(origin.Add(fyne.NewPos(pad, pad+lineH*float32(i))))
		t.Resize(t.MinSize())
	}
	l.lines = lines
	l.Refresh()
}

// place puts a box of size b below and right of the pointer at (absolute) at, inside the layer.
func (l *tipLayer) place(at fyne.Position, b fyne.Size) fyne.Position {
	var origin fyne.Position
	if app := fyne.CurrentApp(); app != nil {
		origin = app.Driver().AbsolutePositionForObject(l)
	}
	p := at.Subtract(origin).Add(fyne.NewPos(12, 20))
	s := l.Size()
	if p.X+b.Width > s.Width {
		p.X = max(0, s.Width-b.Width)
	}
	if p.Y+b.Height > s.Height {
		p.Y = max(0, p.Y-b.Height-28)
	}
	return p
}

func (l *tipLayer) hide() {
	if l.text == "" {
		return
	}
	l.text, l.lines = "", nil
	l.bg.Hide()
	l.Refresh()
}

func (l *tipLayer) CreateRenderer() fyne.WidgetRenderer { return &tipLayerRenderer{l} }

type tipLayerRenderer struct{ l *tipLayer }

func (r *tipLayerRenderer) Layout(fyne.Size)   {}
func (r *tipLayerRenderer) MinSize() fyne.Size { return fyne.Size{} }
func (r *tipLayerRenderer) Refresh()           { canvas.Refresh(r.l) } // the layer: its new lines are known to no canvas yet
func (r *tipLayerRenderer) Destroy()           {}
func (r *tipLayerRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.l.bg}
	for _, t := range r.l.lines {
		objs = append(objs, t)
	}
	return objs
}

// wrapText breaks s into lines no wider than width at text size size (newlines kept).
func wrapText(s string, width, size float32) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			next := word
			if line != "" {
				next = line + " " + word
			}
			if line != "" && fyne.MeasureText(next, size, fyne.TextStyle{}).Width > width {
				out = append(out, line)
				next = word
			}
			line = next
		}
		out = append(out, line)
	}
	return out
}
