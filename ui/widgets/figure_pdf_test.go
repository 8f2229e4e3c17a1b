package widgets

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"regexp"
	"strconv"
	"testing"
)

// TestFigurePDF: a well-formed one-page PDF whose cross-reference offsets point at their
// objects, whose images are the panels' pixels, whose bar is the PNG's bar column for column,
// and whose text holds the labels (escaped) and the caption (WinAnsi: "·" as 0xb7, "≤" as <=).
func TestFigurePDF(t *testing.T) {
	f := Figure{Panels: []image.Image{testPanel(19, 13, 3, 5, true), testPanel(19, 13, 5, 5, true)}, Labels: []string{"h0", "h1 (x)"}, Colormap: Viridis,
		Scale: Scale{Lo: 0, Hi: 1}, ScaleCaption: "attention", Caption: []string{"a · b", "p ≤ 1"}, Zoom: 1}
	img, lay := RenderFigure(f)
	var buf bytes.Buffer
	if err := RenderFigurePDF(&buf, f); err != nil {
		t.Fatal(err)
	}
	pdf := buf.Bytes()
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatal("not a PDF")
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(pdf)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(pdf[xref:], []byte("xref\n")) {
		t.Fatalf("startxref %d does not point at the table", xref)
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n `).FindAllSubmatch(pdf[xref:], -1)
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("object %d: offset %d holds %.12q", i+1, off, pdf[off:])
		}
	}
	if !bytes.Contains(pdf, []byte(fmt.Sprintf("/MediaBox [0 0 %d %d]", img.Rect.Dx(), img.Rect.Dy()))) {
		t.Error("the page is not the PNG's size")
	}
	streams := regexp.MustCompile(`(?s)/Subtype /Image .*?/Length (\d+) >>\nstream\n`).FindAllSubmatchIndex(pdf, -1)
	if len(streams) != 2 {
		t.Fatalf("%d images", len(streams))
	}
	for i, s := range streams {
		n, _ := strconv.Atoi(string(pdf[s[2]:s[3]]))
		zr, err := zlib.NewReader(bytes.NewReader(pdf[s[1] : s[1]+n]))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(zr)
		p := f.Panels[i].(*image.NRGBA)
		for k := range 19 * 13 {
			if !bytes.Equal(raw[3*k:3*k+3], p.Pix[4*k:4*k+3]) {
				t.Fatalf("image %d pixel %d differs", i, k)
			}
		}
	}
	bars := regexp.MustCompile(`([\d.]+) ([\d.]+) ([\d.]+) rg (\d+) \d+ 1 \d+ re f`).FindAllSubmatch(pdf, -1)
	if len(bars) != lay.Bar.Dx() {
		t.Fatalf("%d bar columns, the PNG's bar is %v", len(bars), lay.Bar)
	}
	for x, b := range bars {
		c := img.RGBAAt(lay.Bar.Min.X+x, lay.Bar.Min.Y)
		got := color.RGBA{ch(b[1]), ch(b[2]), ch(b[3]), 255}
		if got != c {
			t.Fatalf("bar column %d: %v, the PNG has %v", x, got, c)
		}
	}
	for _, s := range []string{"(h0) Tj", `(h1 \(x\)) Tj`, "(a \xb7 b) Tj", "(p <= 1) Tj", "(attention) Tj"} {
		if !bytes.Contains(pdf, []byte(s)) {
			t.Errorf("no %q in the page", s)
		}
	}
}

func ch(b []byte) uint8 {
	v, _ := strconv.ParseFloat(string(b), 64)
	return uint8(math.Round(v * 255))
}
