// Package widgets holds the inspector's custom Fyne widgets: the image with its heatmap
// overlay, the block strip, the timing bars, histograms and matrix charts. No model math:
// widgets draw numbers they are given.
//
// colormap.go: perceptual colormaps as piecewise-linear curves through control points
// sampled from the published maps, and one diverging map (Moreland's cool-warm) for signed
// values, neutral grey at t = 0.5. Invariant: At is monotone in lightness for viridis and
// magma, so a brighter cell always means a larger value, and coolwarm is symmetric about its
// grey centre (At(0.5) is the neutral point a Scale puts 0 on). The mutation that would
// silently break it: clamping t after indexing (t=1 would read past the last control point).
package widgets

import (
	"image/color"
	"math"
	"strings"
)

// Colormap maps [0,1] to a colour.
type Colormap int

const (
	Viridis Colormap = iota
	Magma
	Turbo
	Gray
	CoolWarm // diverging: blue below the centre, grey at 0.5, red above
)

var colormapNames = []string{"viridis", "magma", "turbo", "gray", "coolwarm"}

// Colormaps lists every colormap, in menu order.
func Colormaps() []Colormap { return []Colormap{Viridis, Magma, Turbo, Gray, CoolWarm} }

// Diverging says whether c is meant for signed values centred at 0.
func (c Colormap) Diverging() bool { return c == CoolWarm }

// ColormapNames lists the names, in menu order.
func ColormapNames() []string { return append([]string(nil), colormapNames...) }

func (c Colormap) String() string {
	if c < 0 || int(c) >= len(colormapNames) {
		return "viridis"
	}
	return colormapNames[c]
}

// ParseColormap accepts a name as String gives it (case-insensitive).
func ParseColormap(s string) (Colormap, bool) {
	for i, n := range colormapNames {
		if strings.EqualFold(n, s) {
			return Colormap(i), true
		}
	}
	return Viridis, false
}

// Control points, evenly spaced over [0,1].
// colormapPoints is indexed by Colormap (a slice: At runs per patch of every map drawn).
var colormapPoints = [...][][3]uint8{
	Viridis: {{68, 1, 84}, {72, 40, 120}, {62, 73, 137}, {49, 104, 142}, {38, 130, 142},
		{31, 158, 137}, {53, 183, 121}, {110, 206, 88}, {253, 231, 37}},
	Magma: {{0, 0, 4}, {28, 16, 68}, {79, 18, 123}, {129, 37, 129}, {181, 54, 122},
		{229, 80, 100}, {251, 135, 97}, {254, 194, 135}, {252, 253, 191}},
	Turbo: {{48, 18, 59}, {67, 85, 199}, {62, 147, 254}, {27, 207, 212}, {70, 247, 131},
		{164, 252, 60}, {225, 221, 55}, {254, 163, 50}, {239, 90, 17}, {194, 36, 3}, {122, 4, 3}},
	Gray: {{0, 0, 0}, {255, 255, 255}},
	// Moreland (2009), "Diverging Color Maps for Scientific Visualization", 9 samples.
	CoolWarm: {{59, 76, 192}, {98, 130, 234}, {141, 176, 254}, {184, 208, 249}, {221, 221, 221},
		{245, 196, 173}, {244, 154, 123}, {222, 96, 77}, {180, 4, 38}},
}

// At returns the colour at t, clamped to [0,1]; NaN gives transparent.
func (c Colormap) At(t float64) color.NRGBA {
	if math.IsNaN(t) {
		return color.NRGBA{}
	}
	pts := colormapPoints[Viridis]
	if c >= 0 && int(c) < len(colormapPoints) {
		pts = colormapPoints[c]
	}
	t = math.Min(math.Max(t, 0), 1)
	x := t * float64(len(pts)-1)
	i := min(int(x), len(pts)-2)
	f := x - float64(i)
	a, b := pts[i], pts[i+1]
	mix := func(k int) uint8 { return uint8(math.Round(float64(a[k])*(1-f) + float64(b[k])*f)) }
	return color.NRGBA{mix(0), mix(1), mix(2), 255}
}

// Normalize maps v into [0,1] over [lo,hi]; a flat range maps to 0.5.
func Normalize(v, lo, hi float32) float64 {
	if hi <= lo {
		return 0.5
	}
	return float64((v - lo) / (hi - lo))
}
