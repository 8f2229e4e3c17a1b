// scale_test.go: pins ComputeScale and Norm against references written out here (a full
// sort for percentiles). Invariant kept: Norm(Lo) = 0, Norm(Hi) = 1, linear (or log10-linear)
// between; a diverging scale is [-m, m]; excluded indices and non-finite values never set the
// range; a constant map is recognised. The mutations it catches: a percentile off by one rank
// or taken of the unsorted values, a diverging scale over [min, max], the exclusion ignored,
// a log scale without its floor, FromZero ignored, a clip on the raw max.
package widgets

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// percentileRef is the nearest-rank percentile by a full sort.
func percentileRef(xs []float32, p float64) float32 {
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func TestPercentileMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, n := range []int{1, 2, 7, 100, 1001, 5120} {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(rng.IntN(50)) * 0.25 // many ties
		}
		for _, p := range []float64{0, 1, 50, 99, 99.9, 100} {
			if got, want := Percentile(slices.Clone(xs), p), percentileRef(xs, p); got != want {
				t.Fatalf("n %d p %v: %v, want %v", n, p, got, want)
			}
		}
	}
}

func TestComputeScale(t *testing.T) {
	// 1000 values 0.001 .. 1.000, the query (index 3) far above them all.
	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(i+1) / 1000
	}
	vals[3] = 50
	full := ComputeScale([][]float32{vals}, ScaleOptions{FromZero: true})
	if full.Lo != 0 || full.Hi != 50 || full.Constant {
		t.Errorf("full range from zero: %+v", full)
	}
	ex := ComputeScale([][]float32{vals}, ScaleOptions{FromZero: true, Exclude: []int{3}})
	if ex.Hi != 1 || ex.Excluded != 1 {
		t.Errorf("query excluded: hi %v (want 1), excluded %d", ex.Hi, ex.Excluded)
	}
	clip := ComputeScale([][]float32{vals}, ScaleOptions{Clip: 99, Exclude: []int{3}})
	rest := slices.Delete(slices.Clone(vals), 3, 4)
	if want := percentileRef(rest, 99); clip.Hi != want || clip.Lo != percentileRef(rest, 1) || clip.Above == 0 || clip.Below == 0 {
		t.Errorf("99th percentile: [%v, %v] above %d below %d, want hi %v", clip.Lo, clip.Hi, clip.Above, clip.Below, want)
	}
	if n, sc := clip.Norm(clip.Lo), clip.Norm(clip.Hi); n != 0 || sc != 1 {
		t.Errorf("Norm at the ends: %v, %v", n, sc)
	}
	if got := clip.Norm((clip.Lo + clip.Hi) / 2); math.Abs(got-0.5) > 1e-6 {
		t.Errorf("linear: Norm(mid) = %v", got)
	}
	// Two maps share one scale: the second one's maximum sets it.
	shared := ComputeScale([][]float32{{0, 1, 2}, {0, 7, 3}}, ScaleOptions{FromZero: true})
	if shared.Hi != 7 {
		t.Errorf("shared hi %v, want 7", shared.Hi)
	}
}

func TestComputeScaleLog(t *testing.T) {
	vals := []float32{0, 1e-9, 1e-4, 1e-3, 1e-2, 0.1, 1}
	sc := ComputeScale([][]float32{vals}, ScaleOptions{Log: true, FromZero: true})
	if !sc.Log || sc.Hi != 1 || sc.Lo != float32(LogFloor) {
		t.Fatalf("log scale [%v, %v] log %v, want [%v, 1] (the floor, not 1e-9)", sc.Lo, sc.Hi, sc.Log, LogFloor)
	}
	if got := sc.Norm(1e-3); math.Abs(got-0.5) > 1e-6 {
		t.Errorf("log: Norm(1e-3) over [1e-6, 1] = %v, want 0.5", got)
	}
	if sc.Norm(0) != 0 || sc.Norm(-1) != 0 || !math.IsNaN(sc.Norm(float32(math.NaN()))) {
		t.Error("log: values <= 0 must map to 0, NaN stays NaN")
	}
	if ticks := sc.Ticks(); math.Abs(float64(ticks[1])-1e-3) > 1e-9 {
		t.Errorf("log ticks %v: the middle is the geometric one", ticks)
	}
	// no positive value: linear
	if lin := ComputeScale([][]float32{{-1, -2}}, ScaleOptions{Log: true}); lin.Log {
		t.Error("a log scale over no positive value")
	}
}

func TestComputeScaleDiverging(t *testing.T) {
	vals := []float32{-0.5, 0.2, 2, 0, 1}
	sc := ComputeScale([][]float32{vals}, ScaleOptions{Diverging: true})
	if !sc.Diverging || sc.Lo != -2 || sc.Hi != 2 {
		t.Fatalf("diverging [%v, %v], want [-2, 2]", sc.Lo, sc.Hi)
	}
	if got := sc.Norm(0); got != 0.5 {
		t.Errorf("0 at %v, want the centre 0.5", got)
	}
	if tk := sc.Ticks(); tk != [3]float32{-2, 0, 2} {
		t.Errorf("ticks %v", tk)
	}
	// clipped on |v|
	many := make([]float32, 200)
	for i := range many {
		many[i] = float32(i-100) / 100
	}
	many[0] = -40
	c := ComputeScale([][]float32{many}, ScaleOptions{Diverging: true, Clip: 99})
	abs := make([]float32, len(many))
	for i, v := range many {
		abs[i] = float32(math.Abs(float64(v)))
	}
	if want := percentileRef(abs, 99); c.Hi != want || c.Lo != -want || c.Below != 1 {
		t.Errorf("clipped diverging [%v, %v] below %d, want ±%v", c.Lo, c.Hi, c.Below, want)
	}
}

func TestComputeScaleConstantAndNonFinite(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	c := ComputeScale([][]float32{{2, 2, nan, 2, inf}}, ScaleOptions{})
	if !c.Constant || c.Empty || c.Lo != 2 || c.Counted != 3 {
		t.Errorf("constant map: %+v", c)
	}
	if e := ComputeScale([][]float32{{nan}}, ScaleOptions{}); !e.Constant || !e.Empty {
		t.Errorf("no finite values: %+v", e)
	}
	// the excluded index alone differs: still constant
	if c := ComputeScale([][]float32{{1, 1, 9, 1}}, ScaleOptions{Exclude: []int{2}}); !c.Constant {
		t.Errorf("constant but for the excluded patch: %+v", c)
	}
	// not zero-based: the low end is the minimum
	if s := ComputeScale([][]float32{{3, 4, 5}}, ScaleOptions{}); s.Lo != 3 || s.Hi != 5 {
		t.Errorf("[%v, %v], want [3, 5]", s.Lo, s.Hi)
	}
	if s := ComputeScale([][]float32{{3, 4, 5}}, ScaleOptions{FromZero: true}); s.Lo != 0 {
		t.Errorf("from zero: lo %v", s.Lo)
	}
}

func TestCoolWarmIsCentred(t *testing.T) {
	if !CoolWarm.Diverging() || Viridis.Diverging() {
		t.Fatal("Diverging()")
	}
	mid := CoolWarm.At(0.5)
	if mid.R != mid.G || mid.G != mid.B {
		t.Errorf("coolwarm centre %v is not grey", mid)
	}
	lo, hi := CoolWarm.At(0), CoolWarm.At(1)
	if !(lo.B > lo.R && hi.R > hi.B) {
		t.Errorf("coolwarm ends %v (want blue) .. %v (want red)", lo, hi)
	}
}
