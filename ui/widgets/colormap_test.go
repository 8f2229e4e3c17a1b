// colormap_test.go: pins the colormaps' endpoints and the rule that a larger value is never
// darker (CIE L*) for viridis, magma and gray. Invariant kept: At(0) and At(1) are the
// published end colours and lightness rises monotonically in between; the mutation it
// catches: reordering a control point or reading past the last one at t=1.
package widgets

import (
	"image/color"
	"math"
	"testing"
)

func TestColormapEndpoints(t *testing.T) {
	for _, tc := range []struct {
		cm        Colormap
		lo, hi    color.NRGBA
		loL, hiLo float64 // L* at 0 is below loL, L* at 1 is above hiLo
	}{
		{Viridis, color.NRGBA{68, 1, 84, 255}, color.NRGBA{253, 231, 37, 255}, 20, 85},
		{Magma, color.NRGBA{0, 0, 4, 255}, color.NRGBA{252, 253, 191, 255}, 2, 95},
		{Gray, color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}, 1, 99},
	} {
		if got := tc.cm.At(0); got != tc.lo {
			t.Errorf("%v.At(0) = %v, want %v", tc.cm, got, tc.lo)
		}
		if got := tc.cm.At(1); got != tc.hi {
			t.Errorf("%v.At(1) = %v, want %v", tc.cm, got, tc.hi)
		}
		if got := tc.cm.At(-3); got != tc.lo {
			t.Errorf("%v.At(-3) = %v, want the clamped %v", tc.cm, got, tc.lo)
		}
		if got := tc.cm.At(7); got != tc.hi {
			t.Errorf("%v.At(7) = %v, want the clamped %v", tc.cm, got, tc.hi)
		}
		if l := colormapTestLightness(tc.cm.At(0)); l > tc.loL {
			t.Errorf("%v.At(0) has L* %.1f, want a dark end below %.0f", tc.cm, l, tc.loL)
		}
		if l := colormapTestLightness(tc.cm.At(1)); l < tc.hiLo {
			t.Errorf("%v.At(1) has L* %.1f, want a light end above %.0f", tc.cm, l, tc.hiLo)
		}
		if got := tc.cm.At(math.NaN()); got.A != 0 {
			t.Errorf("%v.At(NaN) = %v, want transparent", tc.cm, got)
		}
	}
}

func TestColormapLightnessMonotone(t *testing.T) {
	for _, cm := range []Colormap{Viridis, Magma, Gray} {
		prev := -1.0
		const n = 1024
		for i := 0; i <= n; i++ {
			tt := float64(i) / n
			l := colormapTestLightness(cm.At(tt))
			// 0.3 L* of slack for the uint8 rounding of neighbouring samples
			if l < prev-0.3 {
				t.Fatalf("%v: L* drops from %.2f to %.2f at t=%.4f", cm, prev, l, tt)
			}
			prev = math.Max(prev, l)
		}
	}
}

func TestColormapTurboSpansHues(t *testing.T) {
	// turbo is not monotone in lightness, but runs from dark blue through green to dark red
	lo, mid, hi := Turbo.At(0), Turbo.At(0.5), Turbo.At(1)
	if !(lo.B > lo.R && mid.G > mid.R && mid.G > mid.B && hi.R > hi.G && hi.R > hi.B) {
		t.Errorf("turbo ends/middle %v %v %v", lo, mid, hi)
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		v, lo, hi float32
		want      float64
	}{
		{0, 0, 1, 0}, {1, 0, 1, 1}, {0.25, 0, 1, 0.25}, {-1, -1, 3, 0}, {1, -1, 3, 0.5},
		{5, 2, 2, 0.5}, {5, 3, 2, 0.5}, {2, 0, 1, 2},
	} {
		if got := Normalize(tc.v, tc.lo, tc.hi); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Normalize(%v, %v, %v) = %v, want %v", tc.v, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestColormapNamesRoundTrip(t *testing.T) {
	names := ColormapNames()
	for i, cm := range Colormaps() {
		if cm.String() != names[i] {
			t.Errorf("Colormaps()[%d].String() = %q, ColormapNames()[%d] = %q", i, cm.String(), i, names[i])
		}
		got, ok := ParseColormap(names[i])
		if !ok || got != cm {
			t.Errorf("ParseColormap(%q) = %v, %v", names[i], got, ok)
		}
	}
	if got, ok := ParseColormap("MAGMA"); !ok || got != Magma {
		t.Errorf("ParseColormap is case-sensitive: %v %v", got, ok)
	}
	if _, ok := ParseColormap("jet"); ok {
		t.Error("ParseColormap accepted an unknown name")
	}
}
