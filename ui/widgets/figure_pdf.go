// figure_pdf.go: the figure as a one-page PDF (PDF 1.4), for papers: the layout of
// RenderFigure (planFigure) at one point a pixel, each panel an RGB image (Flate, lossless),
// the colour bar one filled rectangle per pixel column, the text in Helvetica (a PDF base
// font: nothing embedded; characters outside WinAnsi are written as close ASCII).
//
// Invariant: the cross-reference table gives each object's byte offset exactly (a reader
// seeks by it), and the bar holds exactly RenderFigure's colours (barColour). Mutation that
// would silently break it: counting an object's offset before its "N 0 obj" line is written —
// lenient readers rebuild the table and show the page anyway, strict ones refuse the file
// (TestFigurePDF checks every offset).
package widgets

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image/color"
	"io"
	"strings"
)

// RenderFigurePDF writes f as a PDF page of the size RenderFigure's image has, in points.
func RenderFigurePDF(w io.Writer, f Figure) error {
	plan, err := planVector(f)
	if err != nil {
		return err
	}
	var objs [][]byte // object i+1's body
	add := func(body []byte) int { objs = append(objs, body); return len(objs) }
	catalog := add(nil) // filled in below, once the page's number is known
	pages := add(nil)
	font := add([]byte("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"))
	var xobjs []string
	var content bytes.Buffer
	fmt.Fprintf(&content, "1 1 1 rg 0 0 %d %d re f\n", plan.W, plan.H)
	for i, p := range f.Panels {
		r := plan.Panels[i]
		b := p.Bounds()
		raw := make([]byte, 0, 3*b.Dx()*b.Dy())
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(p.At(x, y)).(color.NRGBA)
				raw = append(raw, c.R, c.G, c.B)
			}
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(raw)
		zw.Close()
		img := add(fmt.Appendf(nil, "<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 "+
			"/Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", b.Dx(), b.Dy(), z.Len(), z.Bytes()))
		name := fmt.Sprintf("Im%d", i)
		xobjs = append(xobjs, fmt.Sprintf("/%s %d 0 R", name, img))
		fmt.Fprintf(&content, "q %d 0 0 %d %d %d cm /%s Do Q\n", r.Dx(), r.Dy(), r.Min.X, plan.H-r.Max.Y, name)
	}
	for x := range plan.Bar.Dx() {
		c := barColour(f.Colormap, x, plan.Bar.Dx())
		fmt.Fprintf(&content, "%.4f %.4f %.4f rg %d %d 1 %d re f\n", float64(c.R)/255, float64(c.G)/255, float64(c.B)/255,
			plan.Bar.Min.X+x, plan.H-plan.Bar.Max.Y, plan.Bar.Dy())
	}
	content.WriteString("0.078 0.078 0.078 rg\n")
	for _, t := range plan.Texts {
		fmt.Fprintf(&content, "BT /F1 %g Tf %d %d Td (%s) Tj ET\n", plan.px(t), t.X, plan.H-t.Y, pdfString(t.S))
	}
	stream := add(fmt.Appendf(nil, "<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.Bytes()))
	page := add(fmt.Appendf(nil, "<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "+
		"/Resources << /Font << /F1 %d 0 R >> /XObject << %s >> >> >>", pages, plan.W, plan.H, stream, font, strings.Join(xobjs, " ")))
	objs[catalog-1] = fmt.Appendf(nil, "<< /Type /Catalog /Pages %d 0 R >>", pages)
	objs[pages-1] = fmt.Appendf(nil, "<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page)

	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, body := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, xref)
	_, err = w.Write(out.Bytes())
	return err
}

// pdfWinAnsi maps the non-ASCII characters the inspector's captions use to WinAnsi bytes.
var pdfWinAnsi = map[rune]byte{'·': 0xb7, '×': 0xd7, '—': 0x97, '–': 0x96, '…': 0x85, '°': 0xb0, 'µ': 0xb5}

// pdfASCII spells the others in ASCII.
var pdfASCII = map[rune]string{'≤': "<=", '≥': ">=", '−': "-", 'Δ': "delta", '▸': ">", '→': "->"}

// pdfString is s as the body of a PDF literal string in WinAnsi: parentheses and backslashes
// escaped, characters outside WinAnsi spelled in ASCII (or "?").
func pdfString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case pdfWinAnsi[r] != 0:
			b.WriteByte(pdfWinAnsi[r])
		case pdfASCII[r] != "":
			b.WriteString(pdfASCII[r])
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}
