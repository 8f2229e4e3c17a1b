package probe_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/engine/probe"
)

// serialPatchStats is the statistics as the engine computed them before they were spread
// over threads: two loops per row, math.Max for max |x|, and the finite checks as scans.
func serialPatchStats(in, out []float32, d int) (st probe.PatchStats) {
	n := len(out) / d
	st = probe.PatchStats{Norm: make([]float32, n), Mean: make([]float32, n), MaxAbs: make([]float32, n), Change: make([]float32, n)}
	for p := range n {
		var ss, sum, mx, diff, inSS float64
		for j, v := range out[p*d : (p+1)*d] {
			xf, xin := float64(v), float64(in[p*d+j])
			ss += xf * xf
			sum += xf
			mx = math.Max(mx, math.Abs(xf))
			diff += (xf - xin) * (xf - xin)
			inSS += xin * xin
		}
		st.Norm[p], st.Mean[p], st.MaxAbs[p] = float32(math.Sqrt(ss)), float32(sum/float64(d)), float32(mx)
		st.Change[p] = float32(math.Sqrt(diff) / math.Max(math.Sqrt(inSS), 1e-30))
		st.MeanChange += float64(st.Change[p])
	}
	st.MeanChange /= float64(max(n, 1))
	finite := func(xs []float32) bool {
		for _, x := range xs {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return false
			}
		}
		return true
	}
	st.Finite, st.InFinite = finite(out), finite(in)
	return st
}

// sameBits is bit equality, with any NaN equal to any NaN (math.Max hands back its NaN
// argument, the new loop math.NaN()).
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// within1ULP: a and b the same float32 or adjacent ones (any NaN equal to any NaN).
func within1ULP(a, b float32) bool {
	if sameBits(a, b) || a == b {
		return true
	}
	return math.Nextafter32(a, b) == b
}

// The block statistics, one pass spread over threads, match the serial loop for every row, at
// every thread count, with NaN and ±Inf where they were: a NaN row's max |x| is NaN unless the
// row also holds an Inf (then +Inf, as math.Max answers), and the finite flags that let the
// run skip its scans say what the scans said. The scalar path gives the loop's bits; the
// AVX-512 path (kernel.RowSumsF64: the float64 sums in 8 lanes, not index order) gives max |x|
// exactly and the rest within one float32 ulp, the mean within the float64 sums' own error
// where it cancels (n * 2^-52 of the mean |x|). Run with both paths.
func TestPatchStatsMatchTheSerialLoop(t *testing.T) {
	saved := kernel.UseAVX512
	defer func() { kernel.UseAVX512 = saved }()
	for _, vector := range []bool{false, true} {
		if vector && !kernel.HasAVX512 {
			continue
		}
		kernel.UseAVX512 = vector
		patchStatsAgainstTheLoop(t, vector)
	}
}

func patchStatsAgainstTheLoop(t *testing.T, vector bool) {
	const S, d = 333, 37
	rng := rand.New(rand.NewPCG(7, 11))
	in, out := make([]float32, S*d), make([]float32, S*d)
	for i := range out {
		in[i] = float32(rng.NormFloat64()) * 3
		out[i] = in[i] + float32(rng.NormFloat64())
	}
	out[5*d+3] = float32(math.NaN())                                      // NaN alone
	out[9*d+1], out[9*d+30] = float32(math.NaN()), float32(math.Inf(-1))  // NaN then -Inf
	out[11*d+2], out[11*d+20] = float32(math.Inf(1)), float32(math.NaN()) // +Inf then NaN
	out[200*d+36] = 3e38                                                  // finite, huge
	out[201*d] = -3e38                                                    // finite, huge
	clean := append([]float32(nil), out...)
	for j := range d {
		clean[5*d+j], clean[9*d+j], clean[11*d+j] = 1, 2, 3
	}
	inBad := append([]float32(nil), in...)
	inBad[300*d+4] = float32(math.Inf(1))
	for _, c := range []struct {
		name    string
		in, out []float32
	}{{"non-finite rows", in, out}, {"finite", in, clean}, {"non-finite input", inBad, clean}} {
		want := serialPatchStats(c.in, c.out, d)
		for _, threads := range []int{1, 2, 7, 16, 0} {
			got := probe.NewPatchStats(c.in, c.out, d, threads)
			for p := range S {
				meanAbs := 0.0
				for _, v := range c.out[p*d : (p+1)*d] {
					meanAbs += math.Abs(float64(v)) / d
				}
				for k, pair := range [][2][]float32{{got.Norm, want.Norm}, {got.Mean, want.Mean}, {got.MaxAbs, want.MaxAbs}, {got.Change, want.Change}} {
					g, w := pair[0][p], pair[1][p]
					ok := sameBits(g, w)
					if vector && k != 2 { // max |x| is exact in any order
						ok = within1ULP(g, w) || (k == 1 && math.Abs(float64(g)-float64(w)) <= d*0x1p-52*meanAbs)
					}
					if !ok {
						t.Fatalf("%s, %d threads, vector %v: row %d stat %d = %v, the serial loop %v", c.name, threads, vector, p, k, g, w)
					}
				}
			}
			if !vector && math.Float64bits(got.MeanChange) != math.Float64bits(want.MeanChange) && !(math.IsNaN(got.MeanChange) && math.IsNaN(want.MeanChange)) {
				t.Errorf("%s, %d threads: mean change %v, the serial loop %v", c.name, threads, got.MeanChange, want.MeanChange)
			}
			if vector && !(math.Abs(got.MeanChange-want.MeanChange) <= 2e-7*math.Abs(want.MeanChange)) && !(math.IsNaN(got.MeanChange) && math.IsNaN(want.MeanChange)) {
				t.Errorf("%s, %d threads: mean change %v, the serial loop %v (beyond the rows' one ulp)", c.name, threads, got.MeanChange, want.MeanChange)
			}
			if got.Finite != want.Finite || got.InFinite != want.InFinite {
				t.Errorf("%s, %d threads: finite %v/%v (out/in), the scans %v/%v", c.name, threads, got.Finite, got.InFinite, want.Finite, want.InFinite)
			}
			if rs := probe.RowStats(c.out, d); rs.Finite != want.Finite {
				t.Errorf("%s: RowStats finite %v, the scan %v", c.name, rs.Finite, want.Finite)
			}
		}
	}
}
