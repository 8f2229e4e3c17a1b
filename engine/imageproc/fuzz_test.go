package imageproc

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// Decoding arbitrary bytes never panics; what decodes has consistent dimensions.
func FuzzDecode(f *testing.F) {
	img := image.NewNRGBA(image.Rect(0, 0, 5, 3))
	img.Set(1, 1, color.NRGBA{200, 10, 10, 128})
	var buf bytes.Buffer
	png.Encode(&buf, img)
	f.Add(buf.Bytes())
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	f.Add([]byte("\xff\xd8\xff\xe1\x00\x10Exif\x00\x00MM\x00*\x00\x00\x00\x08"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rgb, err := Decode(bytes.NewReader(data), "fuzz.img", Limits{MaxPixels: 1 << 20})
		if err != nil {
			return
		}
		if rgb.W <= 0 || rgb.H <= 0 || len(rgb.Pix) != rgb.W*rgb.H*3 {
			t.Fatalf("decoded %dx%d with %d bytes", rgb.W, rgb.H, len(rgb.Pix))
		}
	})
}
