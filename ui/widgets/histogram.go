// histogram.go: a histogram of counts over [lo, hi] with a caption and min/max labels.
// Invariant: bin i is drawn over [lo + i·w, lo + (i+1)·w) of the axis, w = (hi-lo)/len(counts),
// with height count/maxCount, and any non-zero bin is at least one unit tall, so outliers (the
// reason to look at an activation histogram) never vanish. The mutation that would silently
// break it: rounding small bins to zero height, which hides the few massive activations.
package widgets

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Histogram draws bars of counts between lo and hi, a caption above, the range below (with a
// mark at zero when the range spans it), and the bin range and count of the bar under the
// pointer.
//
// Like every Fyne widget it is changed on the UI goroutine; elsewhere wrap calls in fyne.Do.
type Histogram struct {
	widget.BaseWidget
	chartHover[int] // the bin under the pointer, -1: none

	counts  []int
	lo, hi  float32
	caption string
	logY    bool // heights on log(1+count): the rare large activations beside the bulk
}

// SetLogY draws bar heights on a log scale (log(1+count) of log(1+largest)).
func (h *Histogram) SetLogY(on bool) {
	h.logY = on
	h.Refresh()
}

// LogY says whether the heights are on a log scale.
func (h *Histogram) LogY() bool { return h.logY }

var _ desktop.Hoverable = (*Histogram)(nil)

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	h := &Histogram{}
	hit := func(p fyne.Position) int { return h.geom(h.Size(), h.Theme()).binAt(p.X) }
	h.chartHover = newChartHover(-1, hit, h.Refresh)
	h.ExtendBaseWidget(h)
	return h
}

// SetData sets the bin counts over [lo, hi] (bins of equal width) and the caption.
func (h *Histogram) SetData(counts []int, lo, hi float32, caption string) {
	h.counts = append(h.counts[:0], counts...)
	h.lo, h.hi, h.caption = lo, hi, caption
	if h.hovered >= len(h.counts) {
		h.hovered = -1
	}
	h.Refresh()
}

// histGeom is where the bars go for one size.
type histGeom struct {
	x0, y0, x1, y1 float32
	textH          float32
	n              int
}

func (h *Histogram) geom(size fyne.Size, th fyne.Theme) histGeom {
	cs := th.Size(theme.SizeNameCaptionText)
	g := histGeom{n: len(h.counts)}
	g.textH = fyne.MeasureText("0", cs, fyne.TextStyle{}).Height
	g.x0, g.x1 = 2, size.Width-2
	g.y0 = g.textH + 6
	g.y1 = size.Height - g.textH - 4
	return g
}

// binX is the left edge and width of bin i, on whole units with a one-unit gap when the bins
// are wide enough.
func (g histGeom) binX(i int) (x, w float32) {
	pitch := (g.x1 - g.x0) / float32(g.n)
	a := float32(math.Round(float64(g.x0 + float32(i)*pitch)))
	c := float32(math.Round(float64(g.x0 + float32(i+1)*pitch)))
	if pitch >= 4 {
		c--
	}
	return a, max(c-a, 1)
}

// binAt is the bin under x, or -1.
func (g histGeom) binAt(x float32) int {
	if g.n <= 0 || x < g.x0 || x >= g.x1 {
		return -1
	}
	return min(int((x-g.x0)/(g.x1-g.x0)*float32(g.n)), g.n-1)
}

// valueX is where value v lies on the axis.
func (g histGeom) valueX(v, lo, hi float32) float32 {
	return g.x0 + (v-lo)/(hi-lo)*(g.x1-g.x0)
}

// histBarHeight is the drawn height of count c when the largest is top, over a plot ph tall
// (on log(1+count) when logY).
func histBarHeight(c, top int, ph float32, logY bool) float32 {
	if c <= 0 || top <= 0 {
		return 0
	}
	frac := float64(c) / float64(top)
	if logY {
		frac = math.Log1p(float64(c)) / math.Log1p(float64(top))
	}
	return max(float32(math.Round(frac*float64(ph))), 1)
}

// HoverText is what the tooltip says for bin i: its range and count.
func (h *Histogram) HoverText(i int) string {
	if i < 0 || i >= len(h.counts) {
		return ""
	}
	w := (h.hi - h.lo) / float32(len(h.counts))
	a, b := h.lo+float32(i)*w, h.lo+float32(i+1)*w
	return fmt.Sprintf("[%s, %s) · %s", stripFormat3(float64(a)), stripFormat3(float64(b)), histThousands(h.counts[i]))
}

// histThousands writes n with thousands separators (56,463).
func histThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// MinSize is small: histograms sit in side panels.
func (h *Histogram) MinSize() fyne.Size {
	return fyne.NewSize(120, 80)
}

// CreateRenderer implements fyne.Widget.
func (h *Histogram) CreateRenderer() fyne.WidgetRenderer {
	h.ExtendBaseWidget(h)
	return newChartRenderer(h, h.draw, nil)
}

// draw draws one frame of the histogram.
func (h *Histogram) draw(f *chartFrame) bool {
	size, sc, cs, fg, muted := f.size, f.sc, f.cs, f.fg, f.muted
	g := h.geom(size, f.th)
	if g.x1 <= g.x0 || g.y1 <= g.y0 {
		return false
	}

	top, total := 0, 0
	for _, c := range h.counts {
		top = max(top, c)
		total += max(c, 0)
	}
	sc.text(h.caption, 0, 0, size.Width*0.7, g.textH, cs, fg, fyne.TextAlignLeading, true)
	if total > 0 {
		n := "n = " + histThousands(total)
		if h.logY {
			n += " · log scale"
		}
		sc.text(n, size.Width*0.5, 0, size.Width*0.5, g.textH, cs, muted, fyne.TextAlignTrailing, false)
	}

	// Zero, when the range spans it: a faint line the bars stand in front of.
	spansZero := h.lo < 0 && h.hi > 0
	if spansZero {
		zx := float32(math.Round(float64(g.valueX(0, h.lo, h.hi))))
		sc.rect(zx, g.y0, 1, g.y1-g.y0, stripWithAlpha(fg, 0x50))
	}

	if g.n == 0 || top == 0 {
		sc.text("no data", g.x0, g.y0, g.x1-g.x0, g.y1-g.y0, cs, muted, fyne.TextAlignCenter, false)
	}
	bar := f.col(theme.ColorNamePrimary)
	hot := stripMix(bar, fg, 0.35)
	for i, c := range h.counts {
		bh := histBarHeight(c, top, g.y1-g.y0, h.logY)
		if bh == 0 {
			continue
		}
		x, w := g.binX(i)
		fill := bar
		if i == h.hovered {
			fill = hot
		}
		sc.rect(x, g.y1-bh, w, bh, fill)
	}
	sc.rect(g.x0, g.y1, g.x1-g.x0, 1, stripWithAlpha(fg, 0x80)) // baseline

	// Range labels under the ends, and zero between them when it fits.
	ly := g.y1 + 3
	loS, hiS := stripFormat3(float64(h.lo)), stripFormat3(float64(h.hi))
	sc.text(loS, g.x0, ly, (g.x1-g.x0)/2, g.textH, cs, muted, fyne.TextAlignLeading, false)
	sc.text(hiS, g.x0+(g.x1-g.x0)/2, ly, (g.x1-g.x0)/2, g.textH, cs, muted, fyne.TextAlignTrailing, false)
	if spansZero {
		zx := g.valueX(0, h.lo, h.hi)
		zw := fyne.MeasureText("0", cs, fyne.TextStyle{}).Width
		loW := fyne.MeasureText(loS, cs, fyne.TextStyle{}).Width
		hiW := fyne.MeasureText(hiS, cs, fyne.TextStyle{}).Width
		if zx-zw/2 > g.x0+loW+6 && zx+zw/2 < g.x1-hiW-6 {
			sc.text("0", zx-zw, ly, 2*zw, g.textH, cs, muted, fyne.TextAlignCenter, false)
		}
	}

	if h.hovered >= 0 && h.hovered < g.n {
		f.tip, f.tipAt = h.HoverText(h.hovered), h.hoverAt
	}
	return true
}
