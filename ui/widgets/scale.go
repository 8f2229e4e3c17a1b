// scale.go: how the values of one map (or of several maps that share a scale) become
// positions on a colormap — the full range or one clipped at a percentile, linear or log10,
// centred at 0 for a diverging map, some indices left out (the query patch), and a constant
// map recognised as such instead of painted. The ImageView, the HeadGrid and the Legend take
// the same Scale, so the legend labels the scale the heatmap was painted with.
//
// Invariant: Norm(Lo) = 0 and Norm(Hi) = 1, linear in v (in log10 v under Log) between them,
// and a diverging scale has Lo = -Hi, so 0 lands on 0.5, the diverging colormap's neutral
// centre. The mutation that would silently break it: a diverging scale over [min, max]
// instead of [-m, m] — a map of mostly positive values would paint its zeros red-ish and
// still look like a plausible diverging map.
package widgets

import (
	"math"
)

// ScaleOptions say how ComputeScale picks a scale.
type ScaleOptions struct {
	// Clip is the percentile the scale stops at (e.g. 99 or 99.9): values above it get the
	// top colour (and, on a two-sided scale, values below the 100-Clip percentile the bottom
	// one). 0, or 100 and above, is the full range.
	Clip float64
	// Log maps log10 of the values; values <= 0 get the bottom colour. The low end is the
	// smallest positive value (the 100-Clip percentile of the positive values when clipping),
	// but never below LogFloor times the high end.
	Log bool
	// Diverging centres the scale at 0: [-m, m], m the largest |value| (the Clip percentile of
	// |value| when clipping). Log does not apply.
	Diverging bool
	// FromZero starts a linear scale of non-negative values at 0 (attention probabilities).
	FromZero bool
	// Exclude lists indices left out of the range in every map (the query patch).
	Exclude []int
}

// LogFloor bounds a log scale's range: the low end is at least LogFloor times the high end
// (six decades), so a few subnormal values do not squeeze the rest into one colour.
const LogFloor = 1e-6

// Scale is a chosen colour scale: what Norm maps to 0 and to 1, and what it was made of.
type Scale struct {
	Lo, Hi    float32
	Log       bool
	Diverging bool
	// Constant: every value counted is the same (Lo = Hi = that value), or none was counted
	// (Empty). A constant map has no colour scale; it is named, not painted.
	Constant, Empty bool
	Clip            float64 // the percentile used, 0 for the full range
	Above, Below    int     // values counted above Hi and below Lo (clipped)
	Counted         int     // finite values counted
	Excluded        int     // values left out (Exclude)
}

// LinearScale is the plain linear scale over [lo, hi].
func LinearScale(lo, hi float32) Scale { return Scale{Lo: lo, Hi: hi} }

// Norm maps v into [0, 1] (clamped by the colormap); NaN stays NaN (uncoloured). A flat
// scale maps everything to 0.5.
func (s Scale) Norm(v float32) float64 {
	if v != v {
		return math.NaN()
	}
	if s.Log {
		if v <= 0 {
			return 0
		}
		lo, hi := math.Log10(float64(s.Lo)), math.Log10(float64(s.Hi))
		if hi <= lo {
			return 0.5
		}
		return (math.Log10(float64(v)) - lo) / (hi - lo)
	}
	return Normalize(v, s.Lo, s.Hi)
}

// Ticks are the values under the legend's left end, middle and right end: the geometric
// middle on a log scale, 0 on a diverging one.
func (s Scale) Ticks() [3]float32 {
	switch {
	case s.Log:
		return [3]float32{s.Lo, float32(math.Sqrt(float64(s.Lo) * float64(s.Hi))), s.Hi}
	case s.Diverging:
		return [3]float32{s.Lo, 0, s.Hi}
	}
	return [3]float32{s.Lo, s.Lo + (s.Hi-s.Lo)/2, s.Hi}
}

// ComputeScale picks the scale of maps (one shared scale when there are several) under o.
// Infinite and NaN values are not counted.
func ComputeScale(maps [][]float32, o ScaleOptions) Scale {
	vals, excluded := scaleValues(maps, o.Exclude)
	s := Scale{Counted: len(vals), Excluded: excluded}
	if len(vals) == 0 {
		s.Constant, s.Empty = true, true
		return s
	}
	mn, mx := vals[0], vals[0]
	for _, v := range vals {
		mn, mx = min(mn, v), max(mx, v)
	}
	if mn == mx {
		s.Constant, s.Lo, s.Hi = true, mn, mx
		return s
	}
	clip := o.Clip > 0 && o.Clip < 100
	if clip {
		s.Clip = o.Clip
	}
	switch {
	case o.Diverging:
		m := max(-mn, mx)
		if clip {
			abs := make([]float32, len(vals))
			for i, v := range vals {
				abs[i] = float32(math.Abs(float64(v)))
			}
			m = Percentile(abs, o.Clip)
		}
		if m <= 0 {
			m = max(-mn, mx)
		}
		s.Lo, s.Hi, s.Diverging = -m, m, true
	case o.Log && mx > 0:
		pos := vals[:0:0]
		for _, v := range vals {
			if v > 0 {
				pos = append(pos, v)
			}
		}
		lo, hi := slicesMin(pos), mx
		if clip {
			lo, hi = Percentile(pos, 100-o.Clip), Percentile(pos, o.Clip)
		}
		lo = max(lo, hi*LogFloor)
		if lo >= hi {
			lo = hi * 0.1
		}
		s.Lo, s.Hi, s.Log = lo, hi, true
	default:
		lo, hi := mn, mx
		if clip {
			lo, hi = Percentile(vals, 100-o.Clip), Percentile(vals, o.Clip)
		}
		if o.FromZero && mn >= 0 {
			lo = 0
		}
		if hi <= lo { // a clip inside a run of equal values: keep the full range
			lo, hi = mn, mx
			if o.FromZero && mn >= 0 {
				lo = 0
			}
			s.Clip = 0
		}
		s.Lo, s.Hi = lo, hi
	}
	for _, v := range vals {
		if v > s.Hi {
			s.Above++
		} else if v < s.Lo && !(s.Log && v <= 0) {
			s.Below++
		}
	}
	return s
}

// scaleValues collects the finite values of maps outside exclude.
func scaleValues(maps [][]float32, exclude []int) (vals []float32, excluded int) {
	n := 0
	for _, m := range maps {
		n += len(m)
	}
	vals = make([]float32, 0, n)
	for _, m := range maps {
		for i, v := range m {
			if scaleExcluded(i, exclude) {
				excluded++
				continue
			}
			if f := float64(v); !math.IsNaN(f) && !math.IsInf(f, 0) {
				vals = append(vals, v)
			}
		}
	}
	return vals, excluded
}

func scaleExcluded(i int, exclude []int) bool {
	for _, e := range exclude {
		if i == e {
			return true
		}
	}
	return false
}

func slicesMin(xs []float32) float32 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// Percentile is the nearest-rank p-th percentile of xs (p in (0, 100]): the value at rank
// ceil(p/100 * n) in ascending order (the smallest for p <= 0). xs is reordered.
func Percentile(xs []float32, p float64) float32 {
	n := len(xs)
	if n == 0 {
		return float32(math.NaN())
	}
	k := int(math.Ceil(p/100*float64(n))) - 1
	return selectKth(xs, min(max(k, 0), n-1))
}

// selectKth is the k-th smallest (0-based) of xs, by quickselect (Hoare partition around a
// median of three); xs is reordered. No NaN in xs.
func selectKth(xs []float32, k int) float32 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}
