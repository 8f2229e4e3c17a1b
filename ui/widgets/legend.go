// legend.go: a horizontal colour bar with its caption and lo / mid / hi tick labels, for the
// Scale the heatmap was painted with: the geometric middle on a log scale, 0 in the middle
// of a diverging one, "≥" / "≤" on an end where values were clipped, and no bar at all for a
// constant map (there is no scale to show).
// Invariant: the bar's left end is cm.At(0) and sits above the lo label, its right end is
// cm.At(1) above the hi label — the same Normalize direction the ImageView uses. The
// mutation that would silently break it: sampling t = x/w instead of x/(w-1) (or reversing
// it), which shifts or flips the scale while still drawing a plausible gradient.
package widgets

import (
	"image/color"
	"math"
	"strconv"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Legend is a colour bar with lo/hi tick labels and a caption, horizontal.
type Legend struct {
	widget.BaseWidget

	mu      sync.Mutex
	cm      Colormap
	ticks   [3]string
	caption string
	set     bool
	noBar   bool // a constant map: no scale to show
}

// NewLegend returns a legend for viridis over an unset range (no tick labels).
func NewLegend() *Legend {
	l := &Legend{}
	l.ExtendBaseWidget(l)
	return l
}

// SetRange sets the colormap, a linear value range and the caption.
func (l *Legend) SetRange(cm Colormap, lo, hi float32, caption string) {
	l.SetScale(cm, LinearScale(lo, hi), caption)
}

// SetScale shows the scale s on colormap cm with caption: s's ticks, "≥" before the high
// label when values were clipped above it and "≤" before the low one when clipped below;
// for a constant (or empty) scale no bar, the value in the middle.
func (l *Legend) SetScale(cm Colormap, s Scale, caption string) {
	l.mu.Lock()
	l.cm, l.caption, l.set, l.noBar = cm, caption, true, s.Constant
	l.ticks = legendTicks(s)
	l.mu.Unlock()
	l.Refresh()
}

// legendTicks are the three labels of s.
func legendTicks(s Scale) [3]string {
	if s.Constant {
		if s.Empty {
			return [3]string{"", "no values", ""}
		}
		return [3]string{"", "= " + legendFormatValue(s.Lo), ""}
	}
	t := s.Ticks()
	out := [3]string{legendFormatValue(t[0]), legendFormatValue(t[1]), legendFormatValue(t[2])}
	if s.Below > 0 {
		out[0] = "≤" + out[0]
	}
	if s.Above > 0 {
		out[2] = "≥" + out[2]
	}
	return out
}

// Labels are the tick labels (lo, mid, hi) and the caption shown.
func (l *Legend) Labels() (ticks [3]string, caption string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ticks, l.caption
}

// BarShown says whether the colour bar is drawn (not for a constant map).
func (l *Legend) BarShown() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set && !l.noBar
}

// legendFormatValue prints a value compactly with about three significant digits:
// 0.031, 12.5, 1.2e-05, 3.4e+06.
func legendFormatValue(v float32) string {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case f == 0:
		return "0"
	}
	a := math.Abs(f)
	if a >= 1e5 || a < 1e-3 {
		s := strconv.FormatFloat(f, 'e', 1, 64)
		return strings.Replace(s, ".0e", "e", 1)
	}
	s := strconv.FormatFloat(f, 'g', 3, 64)
	if strings.ContainsRune(s, 'e') { // 'g' picks e-notation for 1e3..1e5 at 3 digits
		s = strconv.FormatFloat(math.Round(f), 'f', 0, 64)
	}
	return s
}

const (
	legendBarHeight  = 12
	legendTickHeight = 4
)

// CreateRenderer implements fyne.Widget.
func (l *Legend) CreateRenderer() fyne.WidgetRenderer {
	l.ExtendBaseWidget(l)
	r := &legendRenderer{l: l}
	r.caption = canvas.NewText("", theme.Color(theme.ColorNameForeground))
	r.caption.TextStyle = fyne.TextStyle{Bold: true}
	r.bar = canvas.NewRasterWithPixels(func(x, _, w, _ int) color.Color {
		l.mu.Lock()
		cm := l.cm
		l.mu.Unlock()
		if w <= 1 {
			return cm.At(0)
		}
		return cm.At(float64(x) / float64(w-1))
	})
	r.border = canvas.NewRectangle(color.Transparent)
	r.border.StrokeWidth = 1
	for i := range r.ticks {
		r.ticks[i] = canvas.NewRectangle(theme.Color(theme.ColorNameForeground))
		r.labels[i] = canvas.NewText("", theme.Color(theme.ColorNameForeground))
		r.labels[i].TextStyle = fyne.TextStyle{Monospace: true}
	}
	r.labels[1].Alignment = fyne.TextAlignCenter
	r.labels[2].Alignment = fyne.TextAlignTrailing
	r.objects = []fyne.CanvasObject{r.caption, r.bar, r.border}
	for i := range r.ticks {
		r.objects = append(r.objects, r.ticks[i], r.labels[i])
	}
	r.Refresh()
	return r
}

type legendRenderer struct {
	l       *Legend
	caption *canvas.Text
	bar     *canvas.Raster
	border  *canvas.Rectangle
	ticks   [3]*canvas.Rectangle // lo, mid, hi
	labels  [3]*canvas.Text
	objects []fyne.CanvasObject
}

func (r *legendRenderer) Destroy() {}

func (r *legendRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *legendRenderer) textSizes() (capH, lblH float32) {
	capH = r.caption.MinSize().Height
	if r.caption.Text == "" {
		capH = 0
	}
	return capH, r.labels[0].MinSize().Height
}

func (r *legendRenderer) MinSize() fyne.Size {
	capH, lblH := r.textSizes()
	w := float32(160)
	w = max(w, r.caption.MinSize().Width)
	lw := r.labels[0].MinSize().Width + r.labels[1].MinSize().Width + r.labels[2].MinSize().Width + 24
	w = max(w, lw)
	gap := float32(0)
	if capH > 0 {
		gap = 2
	}
	return fyne.NewSize(w, capH+gap+legendBarHeight+legendTickHeight+lblH)
}

func (r *legendRenderer) Layout(size fyne.Size) {
	capH, lblH := r.textSizes()
	y := float32(0)
	r.caption.Move(fyne.NewPos(0, 0))
	r.caption.Resize(fyne.NewSize(size.Width, capH))
	if capH > 0 {
		y = capH + 2
	}
	// the bar takes the remaining height above ticks and labels, at least legendBarHeight
	barH := max(float32(legendBarHeight), size.Height-y-legendTickHeight-lblH)
	r.bar.Move(fyne.NewPos(0, y))
	r.bar.Resize(fyne.NewSize(size.Width, barH))
	r.border.Move(fyne.NewPos(0, y))
	r.border.Resize(fyne.NewSize(size.Width, barH))
	ty := y + barH
	xs := [3]float32{0, size.Width/2 - 0.5, size.Width - 1}
	for i, t := range r.ticks {
		t.Move(fyne.NewPos(xs[i], ty))
		t.Resize(fyne.NewSize(1, legendTickHeight))
	}
	ly := ty + legendTickHeight
	third := size.Width / 3
	r.labels[0].Move(fyne.NewPos(0, ly))
	r.labels[0].Resize(fyne.NewSize(third, lblH))
	r.labels[1].Move(fyne.NewPos(third, ly))
	r.labels[1].Resize(fyne.NewSize(third, lblH))
	r.labels[2].Move(fyne.NewPos(2*third, ly))
	r.labels[2].Resize(fyne.NewSize(size.Width-2*third, lblH))
}

func (r *legendRenderer) Refresh() {
	l := r.l
	l.mu.Lock()
	ticks, caption, set, noBar := l.ticks, l.caption, l.set, l.noBar
	l.mu.Unlock()

	fg := theme.Color(theme.ColorNameForeground)
	dim := theme.Color(theme.ColorNamePlaceHolder)
	r.caption.Text = caption
	r.caption.Color = fg
	r.caption.TextSize = theme.CaptionTextSize()
	r.border.StrokeColor = theme.Color(theme.ColorNameInputBorder)
	texts := [3]string{}
	if set {
		texts = ticks
	}
	r.bar.Hidden, r.border.Hidden = noBar, noBar
	for i := range r.labels {
		r.labels[i].Text = texts[i]
		r.labels[i].Color = fg
		r.labels[i].TextSize = theme.CaptionTextSize()
		r.ticks[i].FillColor = dim
		r.ticks[i].Hidden = !set || noBar
	}
	r.Layout(l.Size())
	r.bar.Refresh()
	canvas.Refresh(l)
}
