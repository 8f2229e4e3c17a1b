// Package numcheck holds the comparisons the parity tests share.
package numcheck

import "math"

// RelErr is max|got-ref| / max|ref|, the parity measure of the issues; +Inf on a length
// mismatch, so a missing tensor never passes.
func RelErr(got, ref []float32) float64 {
	if len(got) != len(ref) {
		return math.Inf(1)
	}
	var d, m float64
	for i := range ref {
		d = math.Max(d, math.Abs(float64(got[i])-float64(ref[i])))
		m = math.Max(m, math.Abs(float64(ref[i])))
	}
	return d / m
}

// MaxAbs is max|got-ref|; +Inf on a length mismatch.
func MaxAbs(got, ref []float32) float64 {
	if len(got) != len(ref) {
		return math.Inf(1)
	}
	var d float64
	for i := range ref {
		d = math.Max(d, math.Abs(float64(got[i])-float64(ref[i])))
	}
	return d
}

// BitEqual says whether two slices hold the same float32 bit patterns.
func BitEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// ULPs is the distance in units in the last place between two finite float32 of the same
// sign (their bit patterns' difference).
func ULPs(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}
