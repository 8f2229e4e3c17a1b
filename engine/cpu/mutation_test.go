// mutation_test.go: the parity check must fail on the three fluent-but-wrong variants.
//
// Invariant: for (a) rope with the interleaved pairing, (b) GELU tanh and erf swapped and
// (c) attention without the segment mask, parityOK against the correct Ref* reports a failure
// by a wide margin (at least 10x the tolerance), while the backend itself passes.
// Mutation that would silently break it: a test input on which the wrong variant happens to
// coincide with the right one (cos = 1, sin = 0; |x| tiny for GELU; a single segment).
package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
)

// refRopeInterleaved is the WRONG convention: element 2i pairs with 2i+1, angle index i.
func refRopeInterleaved(x []float32, stride int, cos, sin []float32, seq, heads, hd int) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	for s := range seq {
		for h := range heads {
			base := s*stride + h*hd
			for i := 0; i < hd/2; i++ {
				a, b := float64(x[base+2*i]), float64(x[base+2*i+1])
				c, sn := float64(cos[s*hd+i]), float64(sin[s*hd+i])
				y[base+2*i] = a*c - b*sn
				y[base+2*i+1] = b*c + a*sn
			}
		}
	}
	return y
}

func narrow(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// expectCaught asserts that the parity check rejects wrong and accepts the backend's got.
func expectCaught(t *testing.T, what string, got []float32, wrong, want []float64, tol float64) {
	t.Helper()
	if d, ok := parityOK(got, want, tol); !ok {
		t.Errorf("%s: backend itself fails parity: RelDiff %.3g", what, d)
	}
	d, ok := parityOK(narrow(wrong), want, tol)
	if ok || d < 10*tol {
		t.Errorf("%s: parity check does not catch the mutation: RelDiff %.3g, tol %.0g", what, d, tol)
	}
	if d, ok := parityOK(got, wrong, tol); ok {
		t.Errorf("%s: backend output also matches the WRONG variant (RelDiff %.3g)", what, d)
	}
}

func TestParityCatchesMutations(t *testing.T) {
	be := New(2)
	defer be.Close()
	r := rand.New(rand.NewPCG(11, 12))

	t.Run("rope interleaved instead of halves", func(t *testing.T) {
		const seq, heads, hd = 7, 3, 16
		// Real rope angles (section 5: theta = [r, c, r, c] * inv_freq), not random ones.
		cos, sin := make([]float32, seq*hd), make([]float32, seq*hd)
		for s := range seq {
			for i := range hd {
				k := i % (hd / 4)
				pos := float64(s/3 + 1)
				if (i/(hd/4))%2 == 1 {
					pos = float64(s%3 + 2)
				}
				th := pos * math.Pow(10000, -2*float64(k)/float64(hd/2))
				cos[s*hd+i], sin[s*hd+i] = float32(math.Cos(th)), float32(math.Sin(th))
			}
		}
		x := conformance.RandVals(r, seq*heads*hd, 1)
		xv := conformance.Upload(be, x)
		be.Rope2D(xv, heads*hd, conformance.Upload(be, cos), conformance.Upload(be, sin), seq, heads, hd)
		got := conformance.Download(be, xv, len(x))
		want := conformance.RefRope2D(x, heads*hd, cos, sin, seq, heads, hd)
		wrong := refRopeInterleaved(x, heads*hd, cos, sin, seq, heads, hd)
		expectCaught(t, "rope", got, wrong, want, conformance.TolRope)
	})

	t.Run("GELU tanh and erf swapped", func(t *testing.T) {
		x := conformance.RandVals(r, 4096, 2)
		for _, form := range []backend.GELUForm{backend.GELUTanh, backend.GELUErf} {
			other := backend.GELUErf
			if form == backend.GELUErf {
				other = backend.GELUTanh
			}
			xv := conformance.Upload(be, x)
			be.GELU(xv, len(x), form)
			expectCaught(t, "GELU "+form.String(), conformance.Download(be, xv, len(x)), conformance.RefGELU(x, other), conformance.RefGELU(x, form), conformance.TolGELU)
		}
	})

	t.Run("attention across segment boundaries", func(t *testing.T) {
		const heads, hd = 3, 16
		segs := conformance.Cuts(0, 5, 6, 20)
		D := heads * hd
		qkv := conformance.RandVals(r, 20*3*D, 1)
		x := conformance.Upload(be, qkv)
		o := conformance.Alloc(be, 20*D)
		scale := float32(0.25)
		be.Attention(o, x, x.At(D), x.At(2*D), 3*D, segs, heads, hd, scale)
		want := conformance.RefAttention(qkv, qkv[D:], qkv[2*D:], 3*D, segs, heads, hd, float64(scale))
		wrong := conformance.RefAttention(qkv, qkv[D:], qkv[2*D:], 3*D, conformance.Cuts(0, 20), heads, hd, float64(scale))
		expectCaught(t, "attention", conformance.Download(be, o, 20*D), wrong, want, conformance.TolAttention)
	})
}
