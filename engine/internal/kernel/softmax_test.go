package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps is the distance in units in the last place between two finite float32 of equal sign.
func ulps(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// TestExpSum: every element within 2 ulp of float32(exp(x-m)) over the whole range a softmax
// feeds it (down to where exp underflows, through the subnormals), NaN kept, -Inf to 0, the
// sum the float64 sum of exactly the first n results, and nothing past n touched, at every
// tail length.
func TestExpSum(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(7, 8))
	worst := int64(0)
	for n := 0; n <= 53; n++ {
		for range 40 {
			m := float32(r.NormFloat64() * 3)
			s := make([]float32, n+5)
			for i := range s {
				s[i] = m - float32(r.Float64()*110) // x - m in [-110, 0]
			}
			if n > 3 {
				s[n-1] = m // the max itself: exp(0) = 1
			}
			in := append([]float32(nil), s...)
			got := ExpSum(&s[0], n, m)
			want := 0.0
			for i, x := range in {
				if i >= n {
					if math.Float32bits(s[i]) != math.Float32bits(x) {
						t.Fatalf("n %d: s[%d] past n changed", n, i)
					}
					continue
				}
				e := float32(math.Exp(float64(x - m)))
				if u := ulps(s[i], e); u > worst {
					worst = u
				}
				want += float64(s[i])
			}
			if math.Abs(got-want) > 1e-12*max(want, 1) {
				t.Fatalf("n %d: sum %v, the elements add to %v", n, got, want)
			}
		}
	}
	if worst > 2 {
		t.Errorf("exp is %d ulp from float32(math.Exp) at worst, want <= 2", worst)
	}
	t.Logf("worst %d ulp", worst)
	sp := []float32{float32(math.NaN()), float32(math.Inf(-1)), 0, -103.9, -87.5, -88}
	ExpSum(&sp[0], len(sp), 0)
	if sp[0] == sp[0] {
		t.Errorf("exp(NaN) = %v, want NaN", sp[0])
	}
	if sp[1] != 0 || sp[2] != 1 {
		t.Errorf("exp(-Inf), exp(0) = %v, %v, want 0, 1", sp[1], sp[2])
	}
	for i, x := range []float64{-103.9, -87.5, -88} {
		if e := float32(math.Exp(x)); ulps(sp[3+i], e) > 2 {
			t.Errorf("exp(%v) = %v, want %v (subnormal range)", x, sp[3+i], e)
		}
	}
}

// TestScaleMax: the max of the scaled values at every tail length, nothing past n touched,
// -Inf for an empty row.
func TestScaleMax(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for n := 0; n <= 53; n++ {
		s := make([]float32, n+5)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		s[n] = 100 // past n: must not be the max
		in := append([]float32(nil), s...)
		got := ScaleMax(&s[0], n, 0.25)
		want := float32(math.Inf(-1))
		for i := range n {
			want = max(want, in[i]*0.25)
			if s[i] != in[i]*0.25 {
				t.Fatalf("n %d: s[%d] = %v, want %v", n, i, s[i], in[i]*0.25)
			}
		}
		for i := n; i < len(s); i++ {
			if s[i] != in[i] {
				t.Fatalf("n %d: s[%d] past n changed", n, i)
			}
		}
		if got != want {
			t.Errorf("n %d: max %v, want %v", n, got, want)
		}
	}
}

// geluTanh64 is gelu_pytorch_tanh in float64, the reference, written as x*sigmoid(2u): the
// textbook 0.5x(1 + tanh(u)) cancels for x below -5 even in float64 (it gives -0 at x = -7.6,
// where the value is -6e-19).
func geluTanh64(x float64) float64 {
	u := 0.7978845608028654 * (x + 0.044715*x*x*x)
	if math.IsInf(x, -1) {
		return math.NaN() // as 0.5x(1 + tanh(u)) = -Inf * 0
	}
	return x / (1 + math.Exp(-2*u))
}

// TestGELUTanh: within 4 ulp of the float64 formula for x >= 0; for x < 0, where a float32
// u = k(x + 0.044715x^3) carries a relative error of a few 2^-24 that exp(-2u) multiplies by
// 2|u| (PyTorch's float32 gelu shares it), within 4 ulp times (1 + 2|u|), so 16 ulp at x = -4
// where gelu is -7e-5; the non-finite values as the float64 formula gives them; every tail
// length; nothing past n.
func TestGELUTanh(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(11, 12))
	worst := int64(0)
	for n := 0; n <= 53; n++ {
		for range 50 {
			x := make([]float32, n+3)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 3)
			}
			in := append([]float32(nil), x...)
			GELUTanh(&x[0], n)
			for i, v := range in {
				if i >= n {
					if math.Float32bits(x[i]) != math.Float32bits(v) {
						t.Fatalf("n %d: x[%d] past n changed", n, i)
					}
					continue
				}
				want := float32(geluTanh64(float64(v)))
				u := 0.7978845608028654 * (float64(v) + 0.044715*float64(v)*float64(v)*float64(v))
				allowed := int64(4)
				if v < 0 {
					allowed = int64(4 * (1 + 2*math.Abs(u)))
				}
				if d := ulps(x[i], want); d > allowed {
					t.Errorf("gelu(%v) = %v, want %v: %d ulp, allowed %d", v, x[i], want, d, allowed)
				} else if v >= 0 && d > worst {
					worst = d
				}
			}
		}
	}
	t.Logf("worst %d ulp for x >= 0", worst)
	inf := float32(math.Inf(1))
	sp := []float32{float32(math.NaN()), inf, -inf, 1e30, -1e30, 0, -20}
	want := make([]float32, len(sp))
	for i, v := range sp {
		want[i] = float32(geluTanh64(float64(v)))
	}
	GELUTanh(&sp[0], len(sp))
	for i := range sp {
		if math.Float32bits(sp[i]) != math.Float32bits(want[i]) && !(sp[i] != sp[i] && want[i] != want[i]) && !(sp[i] == 0 && want[i] == 0) {
			t.Errorf("gelu special %d: %v, want %v", i, sp[i], want[i])
		}
	}
}
