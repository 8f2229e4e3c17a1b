package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddRows: every element of the rows' first n is dst + src rounded once (the scalar
// loop's bits, NaN and infinities included), src advancing by lds (0: one bias row for all),
// and nothing past n in a row, nor past the last row, is written.
func TestAddRows(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(21, 22))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-45, 3.4e38}
	val := func() float32 {
		if r.IntN(10) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
	for _, c := range []struct{ rows, n, ld, lds int }{
		{1, 1, 1, 0}, {3, 15, 20, 0}, {2, 16, 16, 16}, {4, 17, 40, 0}, {32, 32, 96, 96},
		{5, 33, 33, 50}, {1, 100, 100, 100}, {7, 0, 8, 8},
	} {
		dst := make([]float32, (c.rows+1)*c.ld+c.n+16)
		src := make([]float32, (c.rows+1)*max(c.lds, c.n)+c.n+16)
		for i := range dst {
			dst[i] = val()
		}
		for i := range src {
			src[i] = val()
		}
		want := append([]float32(nil), dst...)
		for row := range c.rows {
			for j := range c.n {
				want[row*c.ld+j] += src[row*c.lds+j]
			}
		}
		AddRows(&dst[0], c.ld, &src[0], c.lds, c.rows, c.n)
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
				t.Fatalf("rows %d n %d ld %d lds %d: element %d is %v, want %v", c.rows, c.n, c.ld, c.lds, i, dst[i], want[i])
			}
		}
	}
}
