package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sumRef is norm_amd64.s's order, written out: element 16c+l into acc0[l] (l < 8) or
// acc1[l-8], each term given by term; then lanes l and l+8 added, then l and l+4, l and l+2,
// l and l+1.
func sumRef(x []float32, term func(float32) float64) float64 {
	var acc [2][8]float64
	for i, v := range x {
		acc[i%16/8][i%8] += term(v)
	}
	var t [8]float64
	for l := range t {
		t[l] = acc[0][l] + acc[1][l]
	}
	u := [4]float64{t[0] + t[4], t[1] + t[5], t[2] + t[6], t[3] + t[7]}
	v := [2]float64{u[0] + u[2], u[1] + u[3]}
	return v[0] + v[1]
}

// TestNormPasses: the two sums are exactly the documented order (so a fused d*d + acc, or any
// other order, fails), and NormAffine is the scalar formula element by element, in place too.
func TestNormPasses(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{16, 32, 144, 1152, 4608} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64()*3 + 40) // a large mean: the deviations matter
		}
		if got, want := SumF64(&x[0], n), sumRef(x, func(v float32) float64 { return float64(v) }); got != want {
			t.Errorf("n %d: SumF64 %v, want %v", n, got, want)
		}
		mean := sumRef(x, func(v float32) float64 { return float64(v) }) / float64(n)
		sq := func(v float32) float64 { d := float64(v) - mean; return float64(d * d) }
		if got, want := SumSqDevF64(&x[0], n, mean), sumRef(x, sq); got != want {
			t.Errorf("n %d: SumSqDevF64 %v, want %v", n, got, want)
		}
		w, b := make([]float32, n), make([]float32, n)
		for i := range w {
			w[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		inv := 0.37
		out := make([]float32, n)
		NormAffine(&out[0], &x[0], &w[0], &b[0], n, mean, inv)
		in := append([]float32(nil), x...)
		NormAffine(&x[0], &x[0], &w[0], &b[0], n, mean, inv) // in place
		for i, v := range in {
			xn := float32((float64(v) - mean) * inv)
			want := float32(xn*w[i]) + b[i]
			if math.Float32bits(out[i]) != math.Float32bits(want) || math.Float32bits(x[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: element %d: %v (in place %v), want %v", n, i, out[i], x[i], want)
			}
		}
	}
}
