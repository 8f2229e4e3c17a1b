// This file keeps one invariant: Preprocess emits Qwen2VLImageProcessorPil's
// pixel_values exactly: rows in merge-window order (block_row, block_col,
// in_row, in_col), columns in (c, t, y, x) order, each value
// float32(float32(u8*rescale in float64) - float32(mean)) / float32(std)
// as numpy computes it in float32, the still frame repeated Tp times.
// (Doing the whole rescale+normalize in float64 and rounding once is what
// the torchvision backend's fused op gives: off by up to 5.9e-8 from PIL.)
// Mutation that would silently break it: writing rows in plain raster
// order (r*gw+c) keeps every value and the shape but scrambles patches
// against the position embeddings; the fixtures catch it at row 2.
package imageproc

import (
	"fmt"
	"math"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/internal/par"
)

// Page is the processor output for one image.
type Page struct {
	Pixels     []float32 // [Rows, Cols] rows in merge-window order, columns (c, t, y, x)
	Rows, Cols int       // N and C*Tp*P*P
	Grid       [3]int    // (t, gh, gw), t = 1 for a still image
	Resized    *RGB      // the resized image the patches came from
	OrigW      int       // width before resize (after EXIF orientation)
	OrigH      int       // height before resize
}

// Preprocess resizes img with smartResize(factor = PatchSize*MergeSize) and
// Pillow bicubic, normalizes it and cuts it into merge-ordered patches.
func Preprocess(img *RGB, cfg Config) (*Page, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if img == nil || img.W <= 0 || img.H <= 0 || len(img.Pix) != img.W*img.H*3 {
		return nil, fmt.Errorf("preprocess: invalid image")
	}
	p, m := cfg.PatchSize, cfg.MergeSize
	rh, rw, err := smartResize(img.H, img.W, p*m, cfg.MinPixels, cfg.MaxPixels)
	if err != nil {
		return nil, err
	}
	res := resizeBicubic(img, rw, rh)
	gh, gw := rh/p, rw/p
	page := &Page{
		Rows: gh * gw, Cols: 3 * cfg.TemporalPatchSize * p * p,
		Grid: [3]int{1, gh, gw}, Resized: res, OrigW: img.W, OrigH: img.H,
	}
	page.Pixels = make([]float32, page.Rows*page.Cols)
	patchify(page, normLUT(cfg), cfg)
	return page, nil
}

// MaxPagePixels bounds max_pixels (from a preprocessor config, --max-pixels or the window):
// 2^28 pixels is a 1,048,576-patch page at patch 16, 16 times the hub's largest, and ~3 GiB
// of resized RGB — past it nothing could run, and the resizer would be asked for terabytes.
const MaxPagePixels = 1 << 28

// Validate refuses sizes and constants that make no page, or a page past the bounds, before
// anything is allocated.
func (c Config) Validate() error {
	if c.PatchSize <= 0 || c.PatchSize > 1024 || c.TemporalPatchSize <= 0 || c.TemporalPatchSize > 64 || c.MergeSize <= 0 || c.MergeSize > 64 {
		return fmt.Errorf("preprocess: invalid patch %d / temporal %d / merge %d (want 1-1024 / 1-64 / 1-64)",
			c.PatchSize, c.TemporalPatchSize, c.MergeSize)
	}
	// min_pixels may pass max_pixels (a lowered max, say): smartResize keeps the page within max.
	if c.MinPixels < 0 || c.MaxPixels <= 0 || c.MaxPixels > MaxPagePixels {
		return fmt.Errorf("preprocess: min_pixels %d and max_pixels %d: want min >= 0 and 0 < max <= %d", c.MinPixels, c.MaxPixels, MaxPagePixels)
	}
	for i := range 3 {
		m, s := c.Mean[i], c.Std[i]
		if math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(s) || math.IsInf(s, 0) || math.Abs(s) < 1e-6 {
			return fmt.Errorf("preprocess: image_mean %v / image_std %v: want finite values and |std| >= 1e-6", c.Mean, c.Std)
		}
	}
	if r := c.RescaleFactor; math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return fmt.Errorf("preprocess: rescale_factor %v: want a positive finite number", r)
	}
	return nil
}

// normLUT maps every (channel, byte) to its normalized float32, with the
// numerics of HF's PIL backend: rescale in float64 rounded to float32, then
// numpy float32 (x - mean) / std.
func normLUT(cfg Config) *[3][256]float32 {
	var lut [3][256]float32
	for c := range 3 {
		mean, std := float32(cfg.Mean[c]), float32(cfg.Std[c])
		for v := range 256 {
			x := float32(float64(v) * cfg.RescaleFactor)
			d := float32(x - mean)
			lut[c][v] = float32(d / std)
		}
	}
	return &lut
}

// patchify writes each output row straight from the resized image: the
// first temporal slot of each channel is filled pixel by pixel, the other
// slots are copies of it.
func patchify(page *Page, lut *[3][256]float32, cfg Config) {
	p, tp := cfg.PatchSize, cfg.TemporalPatchSize
	gh, gw, m := page.Grid[1], page.Grid[2], cfg.MergeSize
	stride, pp := page.Resized.W*3, p*p
	pix := page.Resized.Pix
	par.Ranges(page.Rows, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pos := geom.MergeOrderPos(i%(gh*gw), gw, m) // later temporal slices: the same positions
			r, c := pos.Row, pos.Col
			row := page.Pixels[i*page.Cols : (i+1)*page.Cols]
			s0, s1, s2 := row[:pp], row[tp*pp:tp*pp+pp], row[2*tp*pp:2*tp*pp+pp]
			for y := range p {
				src := pix[(r*p+y)*stride+c*p*3:][: 3*p : 3*p]
				d0, d1, d2 := s0[y*p:y*p+p], s1[y*p:y*p+p], s2[y*p:y*p+p]
				for x := range d0 {
					px := src[x*3 : x*3+3 : x*3+3]
					d0[x], d1[x], d2[x] = lut[0][px[0]], lut[1][px[1]], lut[2][px[2]]
				}
			}
			for ch := range 3 {
				for t := 1; t < tp; t++ {
					copy(row[(ch*tp+t)*pp:(ch*tp+t+1)*pp], row[ch*tp*pp:ch*tp*pp+pp])
				}
			}
		}
	})
}
