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

// RenderFigure draws f on white.
func RenderFigure(f Figure) (*image.RGBA, FigureLayout) {
	z := f.Zoom
	if z <= 0 {
		z = 1
	}
	px := func(v float64) int { return int(v*z + 0.5) }
	face := figFace(12 * z)
	small := figFace(11 * z)
	if face == nil || small == nil {
		return renderFigureNoText(f), FigureLayout{}
	}
	defer face.Close()
	defer small.Close()
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
	W := max(gridW, barW, textWidth(face, f.Caption...), textWidth(small, f.ScaleCaption)) + 2*margin
	scaleBlock := lineH + px(4) + barH + px(4) + lineH // caption, bar, ticks
	if f.NoScale {
		scaleBlock = 0
	}
	H := margin + gridH + px(10) + scaleBlock + px(8) + len(f.Caption)*lineH + margin
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Rect, image.White, image.Point{}, draw.Src)

	var lay FigureLayout
	lay.Panels = []image.Rectangle{}
	for i, p := range f.Panels {
		x := margin + (W-2*margin-gridW)/2 + i%cols*(pw+gap)
		y := margin + i/cols*(ph+labelH+gap)
		r := image.Rect(x, y, x+pw, y+ph)
		draw.Draw(img, r, p, p.Bounds().Min, draw.Src)
		lay.Panels = append(lay.Panels, r)
		if i < len(f.Labels) {
			drawText(img, face, f.Labels[i], x+pw/2-textWidth(face, f.Labels[i])/2, y+ph+px(2)+face.Metrics().Ascent.Ceil())
		}
	}
	y := margin + gridH + px(10)
	if !f.NoScale {
		y = drawScale(img, f, small, margin, y, barW, barH, lineH, px, &lay)
	}
	for _, line := range f.Caption {
		drawText(img, face, line, margin, y+face.Metrics().Ascent.Ceil())
		y += lineH
	}
	return img, lay
}

// drawScale draws the scale caption, the bar and its ticks from y; it returns the y after.
func drawScale(img *image.RGBA, f Figure, small font.Face, margin, y, barW, barH, lineH int, px func(float64) int, lay *FigureLayout) int {
	drawText(img, small, f.ScaleCaption, margin, y+small.Metrics().Ascent.Ceil())
	y += lineH + px(4)
	bx := margin
	ticks := legendTicks(f.Scale)
	if !f.Scale.Constant {
		lay.Bar = image.Rect(bx, y, bx+barW, y+barH)
		for x := range barW {
			c := f.Colormap.At(float64(x) / float64(max(barW-1, 1)))
			draw.Draw(img, image.Rect(bx+x, y, bx+x+1, y+barH), image.NewUniform(c), image.Point{}, draw.Src)
		}
		ty := y + barH + px(4) + small.Metrics().Ascent.Ceil()
		drawText(img, small, ticks[0], bx, ty)
		drawText(img, small, ticks[1], bx+barW/2-textWidth(small, ticks[1])/2, ty)
		drawText(img, small, ticks[2], bx+barW-textWidth(small, ticks[2]), ty)
	} else {
		drawText(img, small, "constant map "+ticks[1], bx, y+small.Metrics().Ascent.Ceil())
	}
	return y + barH + px(4) + lineH + px(8)
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
