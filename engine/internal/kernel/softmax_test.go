package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/internal/numcheck"
)

// TestExpSum: the exp of ColExpSum within 1 ulp of float32(exp(x-m)) over the whole range a
// softmax feeds it (down to where exp underflows, through the subnormals), with a max of its
// own per lane; NaN kept, -Inf to 0, exp(0) = 1.
func TestExpSum(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const rows = 200
	var m [32]float32
	for c := range m {
		m[c] = float32(r.NormFloat64() * 3)
	}
	s := make([]float32, rows*32)
	for i := range s {
		s[i] = m[i%32] - float32(r.Float64()*110) // x - m in [-110, 0]
	}
	in := append([]float32(nil), s...)
	var sum [32]float64
	ColExpSum(&s[0], rows, &m, &sum)
	worst := int64(0)
	for i, x := range in {
		e := float32(math.Exp(float64(x - m[i%32])))
		worst = max(worst, numcheck.ULPs(s[i], e))
	}
	if worst > 1 {
		t.Errorf("exp is %d ulp from float32(math.Exp) at worst, want <= 1", worst)
	}
	sp := make([]float32, 32)
	copy(sp, []float32{float32(math.NaN()), float32(math.Inf(-1)), 0, -103.9, -87.5, -88})
	var zero [32]float32
	ColExpSum(&sp[0], 1, &zero, &sum)
	if sp[0] == sp[0] {
		t.Errorf("exp(NaN) = %v, want NaN", sp[0])
	}
	if sp[1] != 0 || sp[2] != 1 {
		t.Errorf("exp(-Inf), exp(0) = %v, %v, want 0, 1", sp[1], sp[2])
	}
	for i, x := range []float64{-103.9, -87.5, -88} {
		if e := float32(math.Exp(x)); numcheck.ULPs(sp[3+i], e) > 1 {
			t.Errorf("exp(%v) = %v, want %v (subnormal range)", x, sp[3+i], e)
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
				if d := numcheck.ULPs(x[i], want); d > allowed {
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

// TestColumnSoftmax: the column forms against per-lane scalar references: ColScaleMax scales
// exactly and takes each column's max; ColExpSum is ExpSum's exp lane by lane (within 1 ulp of
// float32(math.Exp)) and adds each column's float64 sum in row order, exactly; ColScale
// multiplies each column by its own factor; rows past the count are untouched.
func TestColumnSoftmax(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, rows := range []int{0, 1, 5, 252} {
		s := make([]float32, (rows+1)*32)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 4)
		}
		in := append([]float32(nil), s...)
		var m [32]float32
		ColScaleMax(&s[0], rows, 0.5, &m)
		for c := range 32 {
			want := float32(math.Inf(-1))
			for k := range rows {
				if s[k*32+c] != in[k*32+c]*0.5 {
					t.Fatalf("rows %d: s[%d][%d] = %v, want %v", rows, k, c, s[k*32+c], in[k*32+c]*0.5)
				}
				want = max(want, in[k*32+c]*0.5)
			}
			if m[c] != want {
				t.Errorf("rows %d: column %d max %v, want %v", rows, c, m[c], want)
			}
		}
		var sum [32]float64
		for c := range sum {
			sum[c] = float64(c) // added to, not replaced
		}
		scaled := append([]float32(nil), s...)
		ColExpSum(&s[0], rows, &m, &sum)
		for c := range 32 {
			want := float64(c)
			for k := range rows {
				e := float32(math.Exp(float64(scaled[k*32+c] - m[c])))
				if numcheck.ULPs(s[k*32+c], e) > 1 {
					t.Errorf("rows %d: exp at [%d][%d] = %v, want %v", rows, k, c, s[k*32+c], e)
				}
				want += float64(s[k*32+c])
			}
			if sum[c] != want {
				t.Errorf("rows %d: column %d sum %v, want %v (row order, float64)", rows, c, sum[c], want)
			}
		}
		for i := rows * 32; i < len(s); i++ {
			if math.Float32bits(s[i]) != math.Float32bits(in[i]) {
				t.Fatalf("rows %d: element %d past the rows changed", rows, i)
			}
		}
		var a [32]float32
		for c := range a {
			a[c] = float32(c) / 7
		}
		before := append([]float32(nil), s...)
		ColScale(&s[0], rows, &a)
		for i := range s {
			want := before[i]
			if i < rows*32 {
				want *= a[i%32]
			}
			if math.Float32bits(s[i]) != math.Float32bits(want) {
				t.Fatalf("rows %d: ColScale element %d = %v, want %v", rows, i, s[i], want)
			}
		}
	}
}
