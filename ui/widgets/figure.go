// figure.go: the heatmap as people publish it — one panel, or a contact sheet of labelled
// panels that share one scale, over a colour bar with its tick labels and its caption, then
// the caption lines (checkpoint, block, head, query, settings), on white, as one image.
//
// Invariant: the bar under the panels is the Scale the panels were painted with — its left
// end cm.At(0) above the Lo label, its right end cm.At(1) above the Hi label (the Legend's
// direction), and no bar at all for a constant map. The mutation that would silently break
// it: a contact sheet whose panels were each painted with their own scale over one bar —
// every panel still looks like a heatmap, and the bar lies about all but one.
package widgets

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Figure is what RenderFigure lays out.
type Figure struct {
	Panels       []image.Image // all the same size
	Labels       []string      // one per panel, under it; nil: none
	Cols         int           // panels per row; 0: all in one row
	Colormap     Colormap
	Scale        Scale
	ScaleCaption string   // what the bar measures ("attention probability, log10 ...")
	Caption      []string // lines under the bar
	Zoom         float64  // text and margins: 1 at display resolution, 2 at twice it
	NoScale      bool     // no overlay: neither bar nor scale caption
}

// FigureLayout is where RenderFigure put things, in the returned image.
type FigureLayout struct {
	Panels []image.Rectangle
	Bar    image.Rectangle // empty for a constant map
}

var (
	figFontOnce sync.Once
	figFont     *opentype.Font
)

// figFace is Go Regular at size points (72 dpi: one point a pixel); basicfont if it fails.
func figFace(size float64) font.Face {
	figFontOnce.Do(func() { figFont, _ = opentype.Parse(goregular.TTF) })
	if figFont != nil {
		if f, err := opentype.NewFace(figFont, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull}); err == nil {
			return f
		}
	}
	return nil
}

// figText is one line of a figure's text: left end at X, baseline at Y.
type figText struct {
	S     string
	X, Y  int
	Small bool // the scale's caption and tick labels
}

// figPlan is where a figure's parts go, in pixels: what RenderFigure paints and
// RenderFigureSVG writes, from one layout.
type figPlan struct {
	W, H    int
	Panels  []image.Rectangle
	Bar     image.Rectangle // empty: no bar (a constant map, or no scale)
	Texts   []figText
	FontPx  float64 // the text's size (Go Regular, one point a pixel)
	SmallPx float64
}

// planVector is f's layout for a vector export (the reader's font sets the text: the faces it
// was measured with are closed here).
func planVector(f Figure) (figPlan, error) {
	plan, face, small, ok := planFigure(f)
	if !ok {
		return plan, errors.New("figure: the text font could not be loaded")
	}
	face.Close()
	small.Close()
	return plan, nil
}

// px is text t's size in pixels.
func (p figPlan) px(t figText) float64 {
	if t.Small {
		return p.SmallPx
	}
	return p.FontPx
}

// planFigure lays f out with the faces it measured the text in (the caller closes them, or
// draws with them first); ok false when the font cannot be loaded.
func planFigure(f Figure) (plan figPlan, face, small font.Face, ok bool) {
	z := f.Zoom
	if z <= 0 {
		z = 1
	}
	px := func(v float64) int { return int(v*z + 0.5) }
	plan = figPlan{FontPx: 12 * z, SmallPx: 11 * z}
	face, small = figFace(plan.FontPx), figFace(plan.SmallPx)
	if face == nil || small == nil {
		if face != nil {
			face.Close()
		}
		if small != nil {
			small.Close()
		}
		return plan, nil, nil, false
	}
	lineH := face.Metrics().Height.Ceil()
	margin, gap := px(12), px(8)

	n := len(f.Panels)
	var pw, ph int
	if n > 0 {
		b := f.Panels[0].Bounds()
		pw, ph = b.Dx(), b.Dy()
	}
	cols := f.Cols
	if cols <= 0 || cols > n {
		cols = max(n, 1)
	}
	rows := (n + cols - 1) / max(cols, 1)
	labelH := 0
	if len(f.Labels) > 0 {
		labelH = lineH + px(2)
	}
	gridW := cols*pw + (cols-1)*gap
	gridH := rows*(ph+labelH) + max(rows-1, 0)*gap
	barW := min(max(gridW, px(240)), px(480))
	barH := px(14)
	plan.W = max(gridW, barW, textWidth(face, f.Caption...), textWidth(small, f.ScaleCaption)) + 2*margin
	scaleBlock := lineH + px(4) + barH + px(4) + lineH // caption, bar, ticks
	if f.NoScale {
		scaleBlock = 0
	}
	plan.H = margin + gridH + px(10) + scaleBlock + px(8) + len(f.Caption)*lineH + margin
	asc, smallAsc := face.Metrics().Ascent.Ceil(), small.Metrics().Ascent.Ceil()
	for i := range f.Panels {
		x := margin + (plan.W-2*margin-gridW)/2 + i%cols*(pw+gap)
		y := margin + i/cols*(ph+labelH+gap)
		plan.Panels = append(plan.Panels, image.Rect(x, y, x+pw, y+ph))
		if i < len(f.Labels) {
			plan.Texts = append(plan.Texts, figText{S: f.Labels[i], X: x + pw/2 - textWidth(face, f.Labels[i])/2, Y: y + ph + px(2) + asc})
		}
	}
	y := margin + gridH + px(10)
	if !f.NoScale {
		plan.Texts = append(plan.Texts, figText{S: f.ScaleCaption, X: margin, Y: y + smallAsc, Small: true})
		y += lineH + px(4)
		ticks := legendTicks(f.Scale)
		if !f.Scale.Constant {
			plan.Bar = image.Rect(margin, y, margin+barW, y+barH)
			ty := y + barH + px(4) + smallAsc
			plan.Texts = append(plan.Texts,
				figText{S: ticks[0], X: margin, Y: ty, Small: true},
				figText{S: ticks[1], X: margin + barW/2 - textWidth(small, ticks[1])/2, Y: ty, Small: true},
				figText{S: ticks[2], X: margin + barW - textWidth(small, ticks[2]), Y: ty, Small: true})
		} else {
			plan.Texts = append(plan.Texts, figText{S: "constant map " + ticks[1], X: margin, Y: y + smallAsc, Small: true})
		}
		y += barH + px(4) + lineH + px(8)
	}
	for _, line := range f.Caption {
		plan.Texts = append(plan.Texts, figText{S: line, X: margin, Y: y + asc})
		y += lineH
	}
	return plan, face, small, true
}

// barColour is the colour bar's colour at x of w pixels: the left end cm.At(0), the right
// end cm.At(1).
func barColour(cm Colormap, x, w int) color.NRGBA { return cm.At(float64(x) / float64(max(w-1, 1))) }

// RenderFigure draws f on white.
func RenderFigure(f Figure) (*image.RGBA, FigureLayout) {
	plan, face, small, ok := planFigure(f)
	if !ok {
		return renderFigureNoText(f), FigureLayout{}
	}
	defer face.Close()
	defer small.Close()
	img := image.NewRGBA(image.Rect(0, 0, plan.W, plan.H))
	draw.Draw(img, img.Rect, image.White, image.Point{}, draw.Src)
	lay := FigureLayout{Panels: plan.Panels, Bar: plan.Bar}
	for i, p := range f.Panels {
		draw.Draw(img, plan.Panels[i], p, p.Bounds().Min, draw.Src)
	}
	for x := range plan.Bar.Dx() {
		c := barColour(f.Colormap, x, plan.Bar.Dx())
		draw.Draw(img, image.Rect(plan.Bar.Min.X+x, plan.Bar.Min.Y, plan.Bar.Min.X+x+1, plan.Bar.Max.Y), image.NewUniform(c), image.Point{}, draw.Src)
	}
	for _, t := range plan.Texts {
		fc := face
		if t.Small {
			fc = small
		}
		drawText(img, fc, t.S, t.X, t.Y)
	}
	return img, lay
}

// renderFigureNoText is the panels alone, side by side (no font).
func renderFigureNoText(f Figure) *image.RGBA {
	w, h := 0, 0
	for _, p := range f.Panels {
		w += p.Bounds().Dx()
		h = max(h, p.Bounds().Dy())
	}
	img := image.NewRGBA(image.Rect(0, 0, max(w, 1), max(h, 1)))
	x := 0
	for _, p := range f.Panels {
		draw.Draw(img, image.Rect(x, 0, x+p.Bounds().Dx(), p.Bounds().Dy()), p, p.Bounds().Min, draw.Src)
		x += p.Bounds().Dx()
	}
	return img
}

func textWidth(face font.Face, lines ...string) int {
	w := 0
	for _, l := range lines {
		w = max(w, font.MeasureString(face, l).Ceil())
	}
	return w
}

func drawText(img *image.RGBA, face font.Face, s string, x, y int) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.NRGBA{20, 20, 20, 255}), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
