package widgets

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// TestFigureSVGMatchesPNG: the SVG has the PNG's size; its panels are the panels' own pixels
// where the PNG put them; its bar is, column for column, the PNG's bar colours; its text holds
// every label and caption line.
func TestFigureSVGMatchesPNG(t *testing.T) {
	f := Figure{Panels: []image.Image{testPanel(37, 23, 3, 11, false), testPanel(37, 23, 7, 11, false)}, Labels: []string{"h0", "h1 <&>"}, Colormap: Magma,
		Scale: Scale{Lo: 0, Hi: 0.25}, ScaleCaption: "attention probability", Caption: []string{"line one", "line two"}, Zoom: 1}
	img, lay := RenderFigure(f)
	var buf bytes.Buffer
	if err := RenderFigureSVG(&buf, f); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Width  int `xml:"width,attr"`
		Height int `xml:"height,attr"`
		Images []struct {
			X    int    `xml:"x,attr"`
			Y    int    `xml:"y,attr"`
			Href string `xml:"href,attr"`
		} `xml:"image"`
		Bar []struct {
			X    int    `xml:"x,attr"`
			Fill string `xml:"fill,attr"`
		} `xml:"g>rect"`
		Texts []string `xml:"text"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if doc.Width != img.Rect.Dx() || doc.Height != img.Rect.Dy() {
		t.Errorf("SVG %dx%d, PNG %v", doc.Width, doc.Height, img.Rect.Size())
	}
	if len(doc.Images) != 2 {
		t.Fatalf("%d images", len(doc.Images))
	}
	for i, im := range doc.Images {
		data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(im.Href, "data:image/png;base64,"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if image.Pt(im.X, im.Y) != lay.Panels[i].Min || got.Bounds().Size() != lay.Panels[i].Size() {
			t.Errorf("panel %d at %d,%d size %v; the PNG has %v", i, im.X, im.Y, got.Bounds().Size(), lay.Panels[i])
		}
		want := f.Panels[i]
		for y := range 23 {
			for x := range 37 {
				if color.NRGBAModel.Convert(got.At(x, y)) != color.NRGBAModel.Convert(want.At(x, y)) {
					t.Fatalf("panel %d pixel %d,%d differs", i, x, y)
				}
			}
		}
	}
	if len(doc.Bar) != lay.Bar.Dx() || lay.Bar.Empty() {
		t.Fatalf("%d bar columns, the PNG's bar is %v", len(doc.Bar), lay.Bar)
	}
	for x, r := range doc.Bar {
		c := img.RGBAAt(lay.Bar.Min.X+x, lay.Bar.Min.Y)
		if want := fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B); r.Fill != want || r.X != lay.Bar.Min.X+x {
			t.Fatalf("bar column %d: %s at x %d, the PNG has %s", x, r.Fill, r.X, want)
		}
	}
	all := strings.Join(doc.Texts, "|")
	for _, s := range []string{"h0", "h1 <&>", "attention probability", "line one", "line two"} {
		if !strings.Contains(all, s) {
			t.Errorf("text %q missing from %q", s, all)
		}
	}
}

// testPanel is a w x h panel of bytes i*seed+offset (alpha too, unless opaque): every pixel
// differs from its neighbours, so a shifted or resampled copy shows.
func testPanel(w, h, seed, offset int, opaque bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i*seed + offset)
		if opaque && i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	return img
}
