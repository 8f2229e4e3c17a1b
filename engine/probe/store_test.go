package probe_test

// store_test.go: the Store keeps taps by name in the order first added, serves q and k out of
// the kept q|k rows, and the per-patch statistics and channel maps of any tap are those of
// its rows.
//
// Invariant: every expectation is built from values the test wrote itself; the mutation that
// would silently break it: comparing the Store's q against its own q|k through the same
// slicing code.

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/probe"
)

// tinyStore is a store of a 4-patch page, 1 head of 2: D = 2.
func tinyStore(t *testing.T) *probe.Store {
	lay, err := geom.NewLayout(2, []geom.Grid{{T: 1, H: 2, W: 2}})
	must(t, err)
	return probe.NewStore(lay, 1, 2)
}

func TestStoreTaps(t *testing.T) {
	s := tinyStore(t)
	ln1 := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	qk := []float32{1, 2, -1, -2, 3, 4, -3, -4, 5, 6, -5, -6, 7, 8, -7, -8} // per row q (2) then k (2)
	act := make([]float32, 4*6)                                             // I = 6
	for i := range act {
		act[i] = float32(i)
	}
	s.AddTap("ln1", ln1)
	s.AddQK(qk)
	s.AddTap("ffn_act", act)
	s.AddOutput([]float32{0, 0, 1, 1, 2, 2, 3, 3})
	s.AddTap("ln1", ln1) // block 1
	if got := s.Taps(); !slices.Equal(got, []string{"ln1", "q", "k", "ffn_act", "out"}) {
		t.Errorf("Taps = %v", got)
	}
	if s.Kept("ln1") != 2 || s.Kept("q") != 1 || s.Kept("out") != 1 || s.Kept("v") != 0 {
		t.Errorf("kept ln1 %d, q %d, out %d, v %d", s.Kept("ln1"), s.Kept("q"), s.Kept("out"), s.Kept("v"))
	}
	q, err := s.Tap("q", 0)
	must(t, err)
	k, err := s.Tap("k", 0)
	must(t, err)
	if !slices.Equal(q, []float32{1, 2, 3, 4, 5, 6, 7, 8}) || !slices.Equal(k, []float32{-1, -2, -3, -4, -5, -6, -7, -8}) {
		t.Errorf("q %v, k %v", q, k)
	}
	if out, _ := s.Output(0); len(s.Outputs()) != 1 || !slices.Equal(out, []float32{0, 0, 1, 1, 2, 2, 3, 3}) {
		t.Errorf("outputs %v", s.Outputs())
	}
	m, err := s.TapChannelMap("ffn_act", 0, 5)
	must(t, err)
	if !slices.Equal(m, []float32{5, 11, 17, 23}) {
		t.Errorf("ffn_act channel 5 = %v", m)
	}
	if _, err := s.TapChannelMap("ffn_act", 0, 6); err == nil {
		t.Error("channel 6 of a 6-wide tap")
	}
	for _, c := range []struct {
		name  string
		block int
		want  string
	}{{"v", 0, "tap v of block 0 is not kept"}, {"ln1", 2, "tap ln1 of block 2 is not kept (2 blocks kept"},
		{"out", 1, "output of block 1 is not kept"}, {"k", 1, "attention of block 1 is not kept"}} {
		if _, err := s.Tap(c.name, c.block); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Tap(%s, %d): %v, want %q", c.name, c.block, err, c.want)
		}
	}
}

// RowStats are NewPatchStats without the change: the same norm, mean and max |x| bits.
func TestRowStats(t *testing.T) {
	x := []float32{3, -4, 0, 1, 1, 1, -2, 0, 5}
	st := probe.RowStats(x, 3)
	want := [][3]float64{{5, -1.0 / 3, 4}, {math.Sqrt(3), 1, 1}, {math.Sqrt(29), 1, 5}}
	for p, w := range want {
		got := [3]float32{st.Norm[p], st.Mean[p], st.MaxAbs[p]}
		for j := range w {
			if math.Abs(float64(got[j])-w[j]) > 1e-6 {
				t.Errorf("row %d stat %d: %v, want %v", p, j, got[j], w[j])
			}
		}
	}
	if st.Change != nil {
		t.Error("RowStats has a change")
	}
	ps := probe.NewPatchStats(make([]float32, len(x)), x, 3, 0)
	if !slices.Equal(ps.Norm, st.Norm) || !slices.Equal(ps.Mean, st.Mean) || !slices.Equal(ps.MaxAbs, st.MaxAbs) {
		t.Error("RowStats and NewPatchStats differ on the same rows")
	}
	if e := probe.RowStats(x, 0); len(e.Norm) != 0 {
		t.Error("width 0 gave rows")
	}
}
