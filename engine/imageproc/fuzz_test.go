package imageproc

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
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
	for _, name := range []string{"gif_offset_trns.gif", "gif_interlaced.gif", "gif_two_frames.gif"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pil", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
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

// A preprocessor config and an image size together never plan a page past the bounds: a
// config Validate accepts, on an image within DefaultLimits, resizes to at most max_pixels
// (or one factor per side past it, HF's floor) — never to what min_pixels alone asks.
func FuzzPagePlan(f *testing.F) {
	f.Add(100, 100, int64(1e12), int64(16777216), 16, 2)   // min_pixels of 1e12: 3 TB asked once
	f.Add(10000, 10000, int64(65536), int64(1<<28), 16, 2) // the largest page allowed
	f.Add(32, 6400, int64(0), int64(16384), 16, 2)         // the floor of one factor per side
	f.Fuzz(func(t *testing.T, h, w int, minPixels, maxPixels int64, patch, merge int) {
		cfg := QwenConfig()
		cfg.MinPixels, cfg.MaxPixels, cfg.PatchSize, cfg.MergeSize = int(minPixels), int(maxPixels), patch, merge
		if int64(cfg.MinPixels) != minPixels || int64(cfg.MaxPixels) != maxPixels || cfg.Validate() != nil {
			return
		}
		if h <= 0 || w <= 0 || int64(h)*int64(w) > int64(DefaultLimits().MaxPixels) {
			return
		}
		factor := patch * merge
		rh, rw, err := smartResize(h, w, factor, cfg.MinPixels, cfg.MaxPixels)
		if err != nil {
			return
		}
		if bound := max(int64(cfg.MaxPixels), 2*int64(factor)*int64(factor)*maxAspect); int64(rh)*int64(rw) > bound {
			t.Fatalf("%dx%d with min %d max %d factor %d plans %dx%d = %d pixels (bound %d)", h, w, minPixels, maxPixels, factor, rh, rw, int64(rh)*int64(rw), bound)
		}
	})
}
