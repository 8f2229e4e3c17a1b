// smartResize table. Invariant checked: HF 5.17 smart_resize, including
// round-half-to-even (math.Round would give 320x416 for 300x400) and the
// max(factor, ...) floor of the downscale branch.
package imageproc

import (
	"strings"
	"testing"
)

func TestSmartResize(t *testing.T) {
	const q, m = 65536, 16777216
	cases := []struct {
		name             string
		h, w, minP, maxP int
		rh, rw           int
	}{
		{"default 300x400 (12.5 -> 12)", 300, 400, q, m, 288, 384},
		{"upscale to min_pixels", 100, 150, q, m, 224, 320},
		{"max_pixels 16384", 300, 400, q, 16384, 96, 128},
		{"half to even: 13.5 -> 14, 12.5 -> 12", 432, 400, q, m, 448, 384},
		{"half to even: 14.5 -> 14, 81.5 -> 82", 464, 2608, q, m, 448, 2624},
		{"half to even: 80.5 -> 80", 2576, 400, q, m, 2560, 384},
		{"not half: 12.53 -> 13", 401, 400, q, m, 416, 384},
		{"in range unchanged", 512, 1024, q, m, 512, 1024},
		{"4096x4096 exactly max", 4096, 4096, q, m, 4096, 4096},
		{"round lands on max", 4100, 4100, q, m, 4096, 4096},
		{"above max", 4200, 4300, q, m, 4032, 4128},
		{"downscale floors at factor", 32, 6400, q, 16384, 32, 1792},
		{"aspect exactly 200 allowed", 1, 200, q, m, 32, 3648},
		{"3000x4000 default", 3000, 4000, q, m, 3008, 4000},
	}
	for _, c := range cases {
		rh, rw, err := smartResize(c.h, c.w, 32, c.minP, c.maxP)
		if err != nil || rh != c.rh || rw != c.rw {
			t.Errorf("%s: smartResize(%d,%d) = %d,%d,%v want %d,%d", c.name, c.h, c.w, rh, rw, err, c.rh, c.rw)
		}
	}
}

func TestSmartResizeErrors(t *testing.T) {
	for _, c := range [][2]int{{1, 201}, {201, 1}, {10, 2500}} {
		_, _, err := smartResize(c[0], c[1], 32, 65536, 16777216)
		if err == nil || !strings.Contains(err.Error(), "aspect ratio") {
			t.Errorf("%v: got %v, want an aspect-ratio error", c, err)
		}
	}
	_, _, err := smartResize(1, 201, 32, 65536, 16777216)
	if err == nil || !strings.Contains(err.Error(), "1x201") {
		t.Errorf("aspect error should name both sides: %v", err)
	}
	for _, c := range [][2]int{{0, 10}, {10, -1}} {
		if _, _, err := smartResize(c[0], c[1], 32, 65536, 16777216); err == nil {
			t.Errorf("%v: no error for a non-positive side", c)
		}
	}
	// min_pixels 0 does not kick in; round(10/32) = 0 gives a zero side.
	if _, _, err := smartResize(10, 10, 32, 0, 16777216); err == nil {
		t.Error("zero-side result not reported")
	}
}
