// This file keeps one invariant: smartResize returns exactly what HF 5.17
// smart_resize returns (spec §3 step 2), including Python's
// round-half-to-even on h/factor and w/factor.
// Mutation that would silently break it: math.Round instead of
// math.RoundToEven gives 320x416 instead of 288x384 for a 300x400 image.
package imageproc

import (
	"fmt"
	"math"
)

// maxAspect is HF's bound on max(h,w)/min(h,w).
const maxAspect = 200

// smartResize picks the (height, width) the processor resizes to: both
// multiples of factor, the pixel count pulled into [minPixels, maxPixels]
// (minPixels never pushes it past maxPixels; only the floor of one factor
// per side can, as in HF) and the aspect ratio kept as well as possible. It fails for non-positive
// sides, an aspect ratio above 200, and a result with a zero side (HF has no
// guard there; a zero side can only happen when min_pixels does not apply).
func smartResize(h, w, factor, minPixels, maxPixels int) (rh, rw int, err error) {
	if h <= 0 || w <= 0 || factor <= 0 {
		return 0, 0, fmt.Errorf("smart resize: invalid size %dx%d (height x width) or factor %d", h, w, factor)
	}
	if float64(max(h, w))/float64(min(h, w)) > maxAspect {
		return 0, 0, fmt.Errorf("image is %dx%d (height x width): aspect ratio %.1f is more than %d",
			h, w, float64(max(h, w))/float64(min(h, w)), maxAspect)
	}
	fh, fw, ff := float64(h), float64(w), float64(factor)
	rh = int(math.RoundToEven(fh/ff)) * factor
	rw = int(math.RoundToEven(fw/ff)) * factor
	area := float64(h) * float64(w)
	shrink := func() {
		beta := math.Sqrt(area / float64(maxPixels))
		rh = max(factor, int(math.Floor(fh/beta/ff))*factor)
		rw = max(factor, int(math.Floor(fw/beta/ff))*factor)
	}
	switch {
	case int64(rh)*int64(rw) > int64(maxPixels):
		shrink()
	case int64(rh)*int64(rw) < int64(minPixels):
		beta := math.Sqrt(float64(minPixels) / area)
		rh = int(math.Ceil(fh*beta/ff)) * factor
		rw = int(math.Ceil(fw*beta/ff)) * factor
		if int64(rh)*int64(rw) > int64(maxPixels) { // min_pixels never pushes the page past max_pixels
			shrink()
		}
	}
	if rh <= 0 || rw <= 0 {
		return 0, 0, fmt.Errorf("image is %dx%d (height x width): resizes to %dx%d with factor %d", h, w, rh, rw, factor)
	}
	return rh, rw, nil
}
