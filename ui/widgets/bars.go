// bars.go: per-block stacked timing bars, one group per block, one or two series side by side.
// Invariant: every bar's height is its total over one shared axis maximum (the nice-rounded
// largest total of all series), and segments are stacked from rounded cumulative sums, so bars
// of two blocks (or of A and B) compare by height exactly as their totals do. The mutation that
// would silently break it: scaling each series to its own maximum (compare mode would then show
// two equally tall slowest bars however different the settings are).
package widgets

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Series is one run's timings: Rows[block][part], in the unit given to NewBars. A nil or
// empty row (or one of NaN only) is a block without data; NaN parts count as missing.
type Series struct {
	Name string
	Rows [][]float64
}

// Bars draws per-block stacked bars (one segment per part, each in its colour). With two
// series (compare) each group holds two bars side by side, A then B, B drawn in lighter
// tints, with a legend. The slowest block of each series is outlined and labelled with its
// total; hovering shows a block's breakdown; a tap selects a block (a band behind it).
//
// Like every Fyne widget it is changed on the UI goroutine; elsewhere wrap calls in fyne.Do.
type Bars struct {
	widget.BaseWidget
	chartTap[int] // the block under the pointer and the selected one; -1: none

	parts  []string
	colors []color.Color
	unit   string

	series []Series

	// Empty is what the chart says before it has data ("" : "no timings yet").
	Empty string
}

func (b *Bars) empty() string {
	if b.Empty != "" {
		return b.Empty
	}
	return "no timings yet"
}

var (
	_ fyne.Tappable      = (*Bars)(nil)
	_ desktop.Hoverable  = (*Bars)(nil)
	_ desktop.Cursorable = (*Bars)(nil)
)

// barsTint is how far series B's colours are mixed toward the background.
const barsTint = 0.45

// NewBars returns an empty chart. parts names the stacked segments bottom up, colors gives
// their colours (missing ones are taken from Viridis), unit labels the axis ("ms").
func NewBars(parts []string, colors []color.Color, unit string, onSelect func(block int)) *Bars {
	b := &Bars{
		parts:  append([]string(nil), parts...),
		colors: append([]color.Color(nil), colors...),
		unit:   unit,
	}
	hit := func(p fyne.Position) int { return b.geom(b.Size(), b.Theme()).blockAt(p.X) }
	b.chartTap = newChartTap(newChartHover(-1, hit, b.Refresh), b.Refresh, onSelect)
	b.ExtendBaseWidget(b)
	return b
}

// SetSeries replaces the data (copied): one series, or two to compare (A, B). More than two
// are drawn side by side too, but the chart is made for one or two.
func (b *Bars) SetSeries(series ...Series) {
	b.series = make([]Series, len(series))
	for i, s := range series {
		b.series[i].Name = s.Name
		b.series[i].Rows = make([][]float64, len(s.Rows))
		for j, row := range s.Rows {
			b.series[i].Rows[j] = append([]float64(nil), row...)
		}
	}
	if b.hovered >= b.blocks() {
		b.hovered = -1
	}
	b.Refresh()
}

// SetSelected marks block with a band (-1: none). It does not call onSelect.
func (b *Bars) SetSelected(block int) {
	b.selected = block
	b.Refresh()
}

// Selected returns the selected block, -1 if none.
func (b *Bars) Selected() int {
	if b.selected < 0 || b.selected >= b.blocks() {
		return -1
	}
	return b.selected
}

// blocks is the number of groups: the longest series.
func (b *Bars) blocks() int {
	n := 0
	for _, s := range b.series {
		n = max(n, len(s.Rows))
	}
	return n
}

// barsTotal sums the finite, positive parts of a row; ok is false for a row without data.
func barsTotal(row []float64) (total float64, ok bool) {
	for _, v := range row {
		if stripFinite(v) {
			ok = true
			if v > 0 {
				total += v
			}
		}
	}
	return total, ok
}

// total of block in series s; ok is false where there is no data.
func (b *Bars) total(s, block int) (float64, bool) {
	if s < 0 || s >= len(b.series) || block < 0 || block >= len(b.series[s].Rows) {
		return 0, false
	}
	return barsTotal(b.series[s].Rows[block])
}

// Slowest returns the block with the largest total in series (the first on a tie), -1 if the
// series does not exist or has no data.
func (b *Bars) Slowest(series int) int {
	best, bestT := -1, 0.0
	if series < 0 || series >= len(b.series) {
		return -1
	}
	for i := range b.series[series].Rows {
		if t, ok := b.total(series, i); ok && (best < 0 || t > bestT) {
			best, bestT = i, t
		}
	}
	return best
}

// HoverText is what the tooltip says for block, e.g.
// "block 7 · A: wait 1.2 ms, attention 30.1 ms, MLP 41.0 ms = 72.3 ms"; in compare mode the
// next series follows on its own line with its change against the first
// ("B: … = 60.1 ms (−16.9%)").
func (b *Bars) HoverText(block int) string {
	if block < 0 || block >= b.blocks() {
		return ""
	}
	var lines []string
	for s, ser := range b.series {
		var sb strings.Builder
		if s == 0 {
			fmt.Fprintf(&sb, "block %d", block)
			if ser.Name != "" {
				sb.WriteString(" · ")
			} else {
				sb.WriteString(": ")
			}
		}
		if ser.Name != "" {
			sb.WriteString(ser.Name + ": ")
		} else if s > 0 {
			fmt.Fprintf(&sb, "series %d: ", s+1)
		}
		t, ok := b.total(s, block)
		if !ok {
			sb.WriteString("no data")
			lines = append(lines, sb.String())
			continue
		}
		row := ser.Rows[block]
		for p, v := range row {
			if p > 0 {
				sb.WriteString(", ")
			}
			name := fmt.Sprintf("part %d", p+1)
			if p < len(b.parts) {
				name = b.parts[p]
			}
			if stripFinite(v) {
				fmt.Fprintf(&sb, "%s %s", name, b.withUnit(v))
			} else {
				fmt.Fprintf(&sb, "%s –", name)
			}
		}
		if len(row) > 1 {
			fmt.Fprintf(&sb, " = %s", b.withUnit(t))
		}
		if t0, ok0 := b.total(0, block); s > 0 && ok0 && t0 > 0 {
			fmt.Fprintf(&sb, " (%s%%)", barsSigned((t-t0)/t0*100))
		}
		lines = append(lines, sb.String())
	}
	return strings.Join(lines, "\n")
}

func (b *Bars) withUnit(v float64) string {
	if b.unit == "" {
		return barsFormat(v)
	}
	return barsFormat(v) + " " + b.unit
}

// barsFormat writes a measurement with one decimal from 1 up and two significant digits
// below (0.04, 0.12), so small waits do not read as "0.0".
func barsFormat(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1e4:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

// barsSigned writes a percentage change with its sign (a real minus sign).
func barsSigned(p float64) string {
	s := strconv.FormatFloat(math.Abs(p), 'f', 1, 64)
	if s == "0.0" {
		return "±0.0"
	}
	if p < 0 {
		return "−" + s
	}
	return "+" + s
}

// partColor is the colour of part p, tinted toward bg for series s > 0.
func (b *Bars) partColor(p, s int, bg color.Color) color.Color {
	var c color.Color
	if p < len(b.colors) && b.colors[p] != nil {
		c = b.colors[p]
	} else {
		c = Viridis.At(float64(p%4) / 3)
	}
	if s > 0 {
		return stripMix(c, bg, barsTint)
	}
	return c
}

// barsNiceStep returns a step of 1, 2 or 5 x 10^k so that [0, top] needs at most maxTicks
// steps, and the axis maximum (a whole number of steps, at least top).
func barsNiceStep(top float64, maxTicks int) (step, axisMax float64) {
	if !(top > 0) || math.IsInf(top, 0) {
		return 1, 1
	}
	maxTicks = max(maxTicks, 1)
	raw := top / float64(maxTicks)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw*(1-1e-9) {
			break
		}
	}
	axisMax = math.Ceil(top/step-1e-9) * step
	return step, axisMax
}

// barsTickLabel formats tick v of an axis with the given step, with as many decimals as the
// step needs.
func barsTickLabel(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// barsGeom is where everything goes for one size.
type barsGeom struct {
	x0, y0, x1, y1 float32 // plot area
	step, axisMax  float64
	textH, axisW   float32
	legendH        float32
	pitch          float32 // width of one block's group
	n, ns          int
}

func (b *Bars) geom(size fyne.Size, th fyne.Theme) barsGeom {
	cs := th.Size(theme.SizeNameCaptionText)
	g := barsGeom{n: b.blocks(), ns: max(len(b.series), 1)}
	g.textH = fyne.MeasureText("0", cs, fyne.TextStyle{}).Height
	g.legendH = g.textH + 8
	g.y0 = g.legendH + g.textH + 2 // head room for the slowest bar's total
	g.y1 = size.Height - g.textH - 4
	top := 0.0
	for s := range b.series {
		for i := range b.series[s].Rows {
			if t, ok := b.total(s, i); ok {
				top = math.Max(top, t)
			}
		}
	}
	g.step, g.axisMax = barsNiceStep(top, int(max((g.y1-g.y0)/28, 1)))
	labelW := fyne.MeasureText("block", cs, fyne.TextStyle{}).Width
	for v := 0.0; v <= g.axisMax+g.step/2; v += g.step {
		labelW = max(labelW, fyne.MeasureText(barsTickLabel(v, g.step), cs, fyne.TextStyle{}).Width)
	}
	g.axisW = float32(math.Ceil(float64(labelW))) + 8
	g.x0 = g.axisW
	g.x1 = size.Width - 4
	if g.n > 0 {
		g.pitch = (g.x1 - g.x0) / float32(g.n)
	}
	return g
}

// y is the vertical position of value v.
func (g barsGeom) y(v float64) float32 {
	f := float32(v / g.axisMax)
	return float32(math.Round(float64(g.y1 - f*(g.y1-g.y0))))
}

// groupX is the left edge and width of block's whole group.
func (g barsGeom) groupX(block int) (x, w float32) {
	a := float32(math.Round(float64(g.x0 + float32(block)*g.pitch)))
	c := float32(math.Round(float64(g.x0 + float32(block+1)*g.pitch)))
	return a, c - a
}

// barX is the left edge and width of series s's bar in block's group.
func (g barsGeom) barX(block, s int) (x, w float32) {
	inner := max(g.pitch*0.74, 1)
	left := g.x0 + float32(block)*g.pitch + (g.pitch-inner)/2
	gap := float32(0)
	if g.ns > 1 && inner >= float32(3*g.ns) {
		gap = 1
	}
	bw := (inner - gap*float32(g.ns-1)) / float32(g.ns)
	a := float32(math.Round(float64(left + float32(s)*(bw+gap))))
	c := float32(math.Round(float64(left + float32(s)*(bw+gap) + bw)))
	return a, max(c-a, 1)
}

// blockAt is the group under x, or -1.
func (g barsGeom) blockAt(x float32) int {
	if g.n <= 0 || x < g.x0 || x >= g.x1 {
		return -1
	}
	return min(int((x-g.x0)/g.pitch), g.n-1)
}

// MinSize leaves a few units per bar and room for the axis, legend and labels.
func (b *Bars) MinSize() fyne.Size {
	n := max(b.blocks(), 1)
	return fyne.NewSize(60+float32(n*max(len(b.series), 1))*3, 120)
}

// CreateRenderer implements fyne.Widget.
func (b *Bars) CreateRenderer() fyne.WidgetRenderer {
	b.ExtendBaseWidget(b)
	return newChartRenderer(b, b.draw, nil)
}

// draw draws one frame of the chart.
func (b *Bars) draw(f *chartFrame) bool {
	size, th, sc, cs := f.size, f.th, f.sc, f.cs
	fg, bg, muted := f.fg, f.col(theme.ColorNameBackground), f.muted
	g := b.geom(size, th)
	if size.Width <= g.axisW || g.y1 <= g.y0 {
		return false
	}

	// Selection and hover bands, behind everything.
	band := func(i int, c color.Color) {
		if i >= 0 && i < g.n {
			x, w := g.groupX(i)
			sc.rect(x, g.y0-g.textH-2, w, g.y1-g.y0+g.textH+2, c)
		}
	}
	band(b.selected, f.col(theme.ColorNameSelection))
	if b.hovered != b.selected {
		band(b.hovered, f.col(theme.ColorNameHover))
	}

	// Grid lines and tick labels.
	grid := stripWithAlpha(fg, 0x22)
	for t := 0.0; t <= g.axisMax+g.step/2; t += g.step {
		y := g.y(t)
		sc.rect(g.x0, y, g.x1-g.x0, 1, grid)
		sc.text(barsTickLabel(t, g.step), 0, y-g.textH/2, g.axisW-6, g.textH, cs, muted, fyne.TextAlignTrailing, false)
	}
	sc.rect(g.x0, g.y1, g.x1-g.x0, 1, stripWithAlpha(fg, 0x80)) // baseline

	// Unit (top left) and legend (top right).
	sc.text(b.unit, 0, 0, g.axisW-6, g.textH, cs, muted, fyne.TextAlignTrailing, false)
	b.legend(f, g)

	// Bars, segments stacked from rounded cumulative sums so they abut exactly.
	for s := range b.series {
		for i := range b.series[s].Rows {
			if _, ok := b.total(s, i); !ok {
				continue
			}
			x, w := g.barX(i, s)
			cum := 0.0
			for p, val := range b.series[s].Rows[i] {
				if !stripFinite(val) || val <= 0 {
					continue
				}
				yb := g.y(cum)
				cum += val
				yt := g.y(cum)
				if yb > yt {
					sc.rect(x, yt, w, yb-yt, b.partColor(p, s, bg))
				}
			}
		}
	}

	// The slowest block of each series: outlined, its total written above.
	slow := make([]int, len(b.series))
	for s := range b.series {
		slow[s] = b.Slowest(s)
	}
	for s, i := range slow {
		t, ok := b.total(s, i)
		if !ok || t <= 0 {
			continue
		}
		x, w := g.barX(i, s)
		top := g.y(t)
		sc.outline(x-1, top-1, w+2, g.y1-top+1, fg, 2)
		label := barsFormat(t)
		lw := fyne.MeasureText(label, cs, fyne.TextStyle{Bold: true}).Width + 2
		lx := x + w/2 - lw/2
		align := fyne.TextAlignCenter
		if len(slow) == 2 && slow[0] == slow[1] {
			// Both series peak at the same block: A's label ends before B's outline,
			// B's starts after A's, so neither runs into the other bar's outline.
			if s == 0 {
				lx, align = x+w-2-lw, fyne.TextAlignTrailing
			} else {
				lx, align = x+2, fyne.TextAlignLeading
			}
		}
		lx = max(min(lx, size.Width-lw), g.x0)
		sc.text(label, lx, top-g.textH-3, lw, g.textH, cs, fg, align, true)
	}

	// Block indices under the groups: every stride-th, and the selected one always.
	if g.n > 0 {
		widest := fyne.MeasureText(strconv.Itoa(g.n-1), cs, fyne.TextStyle{Bold: true}).Width + 6
		stride := 1
		for _, k := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} {
			stride = k
			if float32(k)*g.pitch >= widest {
				break
			}
		}
		sel := b.Selected()
		selX := float32(0)
		if sel >= 0 {
			x, w := g.groupX(sel)
			selX = x + w/2
		}
		for i := 0; i < g.n; i++ {
			x, w := g.groupX(i)
			cx := x + w/2
			isSel := i == sel
			if !isSel && (i%stride != 0 || (sel >= 0 && math.Abs(float64(cx-selX)) < float64(widest))) {
				continue
			}
			c := muted
			if isSel {
				c = fg
			}
			sc.text(strconv.Itoa(i), cx-widest/2, g.y1+3, widest, g.textH, cs, c, fyne.TextAlignCenter, isSel)
		}
		sc.text("block", 0, g.y1+3, g.axisW-6, g.textH, cs, muted, fyne.TextAlignTrailing, false)
	} else {
		sc.text(b.empty(), g.x0, g.y0, g.x1-g.x0, g.y1-g.y0, th.Size(theme.SizeNameText), muted, fyne.TextAlignCenter, false)
	}

	// The tooltip, which the renderer adds last, on top.
	if b.hovered >= 0 && b.hovered < g.n {
		f.tip, f.tipAt = b.HoverText(b.hovered), b.hoverAt
	}
	return true
}

// legend draws, right-aligned in the top row, a swatch per part and, with two or more series,
// a small stacked swatch per series (B in its tints).
func (b *Bars) legend(f *chartFrame, g barsGeom) {
	size, sc, cs := f.size, f.sc, f.cs
	fg, bg := f.fg, f.col(theme.ColorNameBackground)
	const sw, gap = 10, 12
	type item struct {
		label string
		draw  func(x, y float32)
	}
	var items []item
	for p, name := range b.parts {
		p := p
		items = append(items, item{name, func(x, y float32) {
			sc.rect(x, y, sw, sw, b.partColor(p, 0, bg)).CornerRadius = 2
		}})
	}
	if len(b.series) > 1 {
		for s, ser := range b.series {
			s := s
			name := ser.Name
			if name == "" {
				name = fmt.Sprintf("series %d", s+1)
			}
			items = append(items, item{name, func(x, y float32) {
				np := max(len(b.parts), 1)
				h := float32(sw+2) / float32(np)
				for p := 0; p < np; p++ {
					sc.rect(x+2, y+sw+1-float32(p+1)*h, sw-4, h, b.partColor(p, s, bg))
				}
			}})
		}
	}
	widths := make([]float32, len(items))
	total := float32(0)
	for i, it := range items {
		widths[i] = sw + 4 + fyne.MeasureText(it.label, cs, fyne.TextStyle{}).Width
		total += widths[i]
		if i > 0 {
			total += gap
		}
		if len(b.series) > 1 && i == len(b.parts) {
			total += gap // a wider space between parts and series
		}
	}
	x := max(size.Width-4-total, g.axisW)
	y := (g.legendH - g.textH) / 2
	for i, it := range items {
		if i > 0 {
			x += gap
		}
		if len(b.series) > 1 && i == len(b.parts) {
			sc.rect(x, y+1, 1, g.textH-2, stripWithAlpha(fg, 0x40)) // parts | series
			x += gap
		}
		it.draw(x, y+(g.textH-sw)/2)
		sc.text(it.label, x+sw+4, y, widths[i]-sw-4, g.textH, cs, fg, fyne.TextAlignLeading, false)
		x += widths[i]
	}
}
