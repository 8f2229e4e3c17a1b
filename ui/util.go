package ui

// util.go: small helpers shared by the panels: merge-window patch indices, means, and
// the few formatting functions. Invariant: patchIndex is the inverse of the engine's
// merge-window order; the mutation that would silently break it: r*gw+c (raster order),
// which puts every heatmap value on a neighbour's patch.

import (
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/widgets"
)

// patchIndex is the sequence index of full-resolution patch (r, c) in a grid gw wide with
// merge size m: 2x2 windows row-major, TL TR BL BR inside each.
func patchIndex(r, c, gw, m int) int {
	return ((r/m)*(gw/m)+c/m)*m*m + (r%m)*m + c%m
}

// patchGrid describes the first frame of the page to the image widgets.
func patchGrid(s *Snapshot) widgets.PatchGrid {
	g := s.Layout.Grids[0]
	m := s.Config.MergeSize
	return widgets.PatchGrid{Rows: g.H, Cols: g.W, Index: func(r, c int) int { return patchIndex(r, c, g.W, m) }}
}

func meanOf(xs []float32) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

func rangeOf(xs []float32) (lo, hi float32) {
	if len(xs) == 0 {
		return 0, 1
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

func nan() float64 { return math.NaN() }

func ms(d time.Duration) float64 { return engine.Millis(d) }

func baseName(p string) string { return filepath.Base(p) }

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
