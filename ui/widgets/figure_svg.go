// figure_svg.go: the figure as SVG, for papers and slides: the layout of RenderFigure
// (planFigure), each panel an embedded PNG at its pixel size, the colour bar one rectangle
// per pixel column, the text as text.
//
// Invariant: the SVG's bar holds exactly the colours RenderFigure paints, column for column
// (barColour), and every panel is the panel's own pixels, losslessly. Mutation that would
// silently break it: a gradient between a few stops of the colormap for the bar — it looks
// the same and is not the scale the panels were painted with (TestFigureSVGMatchesPNG).
package widgets

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
)

// RenderFigureSVG writes f as an SVG document of the size RenderFigure's image has.
func RenderFigureSVG(w io.Writer, f Figure) error {
	plan, err := planVector(f)
	if err != nil {
		return err
	}
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", plan.W, plan.H, plan.W, plan.H)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", plan.W, plan.H)
	for i, p := range f.Panels {
		var buf bytes.Buffer
		if err := png.Encode(&buf, p); err != nil {
			return err
		}
		r := plan.Panels[i]
		fmt.Fprintf(b, `<image x="%d" y="%d" width="%d" height="%d" style="image-rendering:pixelated" href="data:image/png;base64,%s"/>`+"\n",
			r.Min.X, r.Min.Y, r.Dx(), r.Dy(), base64.StdEncoding.EncodeToString(buf.Bytes()))
	}
	if bar := plan.Bar; !bar.Empty() {
		fmt.Fprintf(b, `<g shape-rendering="crispEdges">`+"\n")
		for x := range bar.Dx() {
			c := barColour(f.Colormap, x, bar.Dx())
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="1" height="%d" fill="#%02x%02x%02x"/>`+"\n", bar.Min.X+x, bar.Min.Y, bar.Dy(), c.R, c.G, c.B)
		}
		fmt.Fprintf(b, "</g>\n")
	}
	for _, t := range plan.Texts {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-family="Go, sans-serif" font-size="%g" fill="#141414">`, t.X, t.Y, plan.px(t))
		if err := xml.EscapeText(b, []byte(t.S)); err != nil {
			return err
		}
		fmt.Fprintf(b, "</text>\n")
	}
	fmt.Fprintf(b, "</svg>\n")
	return b.Flush()
}
