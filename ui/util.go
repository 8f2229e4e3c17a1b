package ui

// util.go: small helpers shared by the panels: the page's patch grid, means, and the few
// formatting functions. Invariant: patchGrid indexes patches in the engine's merge-window
// order (engine/geom's Layout.Index, the inverse of the engine's own placement); the mutation that would silently break it: a raster grid,
// which puts every heatmap value on a neighbour's patch.

import (
	"image"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/widgets"
)

// patchGrid describes the first frame of the page to the image widgets.
func patchGrid(s *Snapshot) widgets.PatchGrid {
	g, lay := s.Layout.Grids[0], s.Layout
	return widgets.PatchGrid{Rows: g.H, Cols: g.W, Index: func(row, col int) int { return lay.Index(0, 0, row, col) }}
}

// windowRect is the bounding box, in patch columns (X) and rows (Y), of the rows of block's
// attention segment that holds row q (its window in a windowed block).
func windowRect(lay *geom.Layout, block, q int) image.Rectangle {
	seg := lay.SegmentOf(block, q)
	if seg.End <= seg.Start {
		return image.Rectangle{}
	}
	r := image.Rectangle{Min: image.Pt(math.MaxInt, math.MaxInt), Max: image.Pt(math.MinInt, math.MinInt)}
	for _, pos := range lay.Pos[seg.Start:seg.End] {
		r.Min.X, r.Min.Y = min(r.Min.X, pos.Col), min(r.Min.Y, pos.Row)
		r.Max.X, r.Max.Y = max(r.Max.X, pos.Col+1), max(r.Max.Y, pos.Row+1)
	}
	return r
}

func rangeOf(xs []float32) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range xs {
		if x == x { // a NaN is a patch drawn without colour: not part of the range
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if lo > hi { // empty, or NaN only
		return 0, 1
	}
	return lo, hi
}

func topK(row []float32, k int) []int { return probe.TopK(row, k) }

// rgbImage wraps the preprocessor's resized RGB as an image.Image.
func rgbImage(src *imageproc.RGB) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, src.W, src.H))
	for i := 0; i < src.W*src.H; i++ {
		copy(img.Pix[4*i:4*i+3], src.Pix[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return img
}

func nan() float64 { return math.NaN() }

func ms(d time.Duration) float64 { return engine.Millis(d) }

func baseName(p string) string { return filepath.Base(p) }

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
