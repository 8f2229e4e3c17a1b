package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowSumsF64: the four float64 sums within n*2^-52 of the sum of their terms' magnitudes
// of the index-order sums (only the order differs), max |x| exact with a NaN skipped and +Inf
// kept, the sums NaN where a value is, and nothing read past n (the buffers hold NaN there).
func TestRowSumsF64(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 7, 8, 9, 16, 37, 1152, 1280} {
		for _, special := range []float32{0, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			x, in := make([]float32, n+16), make([]float32, n+16)
			for i := range x {
				x[i], in[i] = float32(math.NaN()), float32(math.NaN())
			}
			for i := range n {
				x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(20)-10)))
				in[i] = x[i] + float32(r.NormFloat64())
			}
			if special != 0 {
				x[r.IntN(n)] = special
			}
			var got [5]float64
			RowSumsF64(&x[0], &in[0], n, &got)
			var want, scale [4]float64
			mx := 0.0
			for i := range n {
				a, b := float64(x[i]), float64(in[i])
				terms := [4]float64{a * a, a, (a - b) * (a - b), b * b}
				for k, v := range terms {
					want[k] += v
					scale[k] += math.Abs(v)
				}
				if m := math.Abs(a); m > mx {
					mx = m
				}
			}
			for k := range want {
				if math.IsNaN(want[k]) || math.IsInf(want[k], 0) {
					if math.IsNaN(want[k]) != math.IsNaN(got[k]) || math.IsInf(want[k], 1) != math.IsInf(got[k], 1) || math.IsInf(want[k], -1) != math.IsInf(got[k], -1) {
						t.Errorf("n %d special %v: sum %d = %v, the loop's %v", n, special, k, got[k], want[k])
					}
					continue
				}
				if d := math.Abs(got[k] - want[k]); d > float64(n)*0x1p-52*scale[k] {
					t.Errorf("n %d special %v: sum %d = %v, the loop's %v (off by %.3g of %.3g)", n, special, k, got[k], want[k], d, scale[k])
				}
			}
			if got[4] != mx {
				t.Errorf("n %d special %v: max |x| %v, want %v", n, special, got[4], mx)
			}
		}
	}
}
