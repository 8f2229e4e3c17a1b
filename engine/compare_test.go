package engine_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
)

// compareTiny opens two sessions of the tiny tower's page under a and b.
func compareTiny(t *testing.T, a, b engine.Settings) (*engine.Session, *engine.Session) {
	t.Helper()
	sa := runTinySession(t, a)
	b.Keep.Outputs = true
	sb, err := sa.Sibling(context.Background(), b, cpuBackend())
	must(t, err)
	t.Cleanup(func() { sb.Close() })
	return sa, sb
}

func runTinySession(t *testing.T, s engine.Settings) *engine.Session {
	t.Helper()
	dir := tinyCheckpoint(t)
	ck, err := engine.OpenCheckpoint(dir)
	must(t, err)
	in := &engine.Input{Grids: []geom.Grid{{T: 1, H: 4, W: 6}}}
	in.Pixels = make([]float32, in.Grids[0].Patches()*ck.Config.PatchDim())
	for i := range in.Pixels {
		in.Pixels[i] = float32(math.Sin(float64(i)))
	}
	s.Keep.Outputs = true
	sess, err := engine.NewSession(context.Background(), ck, in, dir, "", s, cpuBackend())
	must(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// The passes alternate ABBA after a warm-up each, every pass times the blocks asked (and the
// merger only when every block runs), and identical settings read within noise.
func TestCompareInterleavesAndSummarizes(t *testing.T) {
	s := engine.Settings{Residency: engine.Mapped, TileRows: 8}
	a, b := compareTiny(t, s, s)
	var steps []engine.CompareStep
	c, err := engine.CompareSessions(context.Background(), a, b, engine.CompareOptions{Reps: 4}, func(st engine.CompareStep) { steps = append(steps, st) })
	must(t, err)
	if c.Reps != 4 || len(c.A.Passes) != 4 || len(c.B.Passes) != 4 || !c.Merger || c.Blocks != 4 {
		t.Fatalf("reps %d, passes %d/%d, merger %v, blocks %d", c.Reps, len(c.A.Passes), len(c.B.Passes), c.Merger, c.Blocks)
	}
	for r := range 4 {
		aFirst := c.A.Passes[r].Order < c.B.Passes[r].Order
		if aFirst != (r%2 == 0) {
			t.Errorf("repetition %d: A at %d, B at %d: want ABBA (A first in even repetitions)", r, c.A.Passes[r].Order, c.B.Passes[r].Order)
		}
	}
	if steps[0].Rep != -1 || steps[0].Side != 0 || steps[4].Rep != -1 || steps[4].Side != 1 {
		t.Errorf("the first steps %+v: want the warm-up of A, then of B", steps[:8])
	}
	if !c.Identical || c.Verdict != engine.WithinNoise || c.MaxOutputDiff != 0 || !strings.Contains(c.Summary(), "identical settings") {
		t.Errorf("identical settings: %s (identical %v, max diff %g)", c.Summary(), c.Identical, c.MaxOutputDiff)
	}
	p := c.A.Passes[0]
	if len(p.BlockS) != 4 || p.MergerS <= 0 || math.Abs(p.TotalS-(sum(p.BlockS)+p.MergerS)) > 1e-12 {
		t.Errorf("a pass: %+v", p)
	}

	// Blocks alone: two blocks, no merger; another tile is other work with the same outputs.
	b2 := s
	b2.TileRows = 64
	a, b = compareTiny(t, s, b2)
	c, err = engine.CompareSessions(context.Background(), a, b, engine.CompareOptions{Reps: 2, Blocks: 2}, nil)
	must(t, err)
	if c.Blocks != 2 || c.Merger || len(c.A.Passes[0].BlockS) != 2 || c.A.Passes[0].MergerS != 0 || len(c.BlockDiff) != 2 {
		t.Errorf("blocks 0-1: %+v", c)
	}
	if c.Identical || c.MaxOutputDiff != 0 {
		t.Errorf("tile 8 vs 64: identical %v, max output diff %g (want other work, the same bits)", c.Identical, c.MaxOutputDiff)
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// The verdict from passes with known times: a 25% slower B with 1% noise is told apart,
// 2% noise alone is not, and one pair cannot tell anything.
func TestCompareVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	noisy := func(x, rel float64) float64 { return x * (1 + rel*(2*r.Float64()-1)) }
	for _, c := range []struct {
		name      string
		reps      int
		slowdown  float64
		noise     float64
		verdict   string
		ratioNear float64
	}{
		{"B 25% slower", 5, 1.25, 0.01, engine.AFaster, 1.25},
		{"B 20% faster", 3, 0.8, 0.01, engine.BFaster, 0.8},
		{"noise alone", 6, 1, 0.02, engine.WithinNoise, 1},
		{"one pair", 1, 1.5, 0.01, engine.WithinNoise, 1.5},
	} {
		var passes [2][]engine.PassTimes
		for range c.reps {
			base := noisy(1, 0.3) // the machine's speed drifts; pairs share it
			passes[0] = append(passes[0], engine.PassTimes{TotalS: noisy(base, c.noise), BlockS: []float64{base}, AttentionS: []float64{0}, MLPS: []float64{0}})
			passes[1] = append(passes[1], engine.PassTimes{TotalS: noisy(base*c.slowdown, c.noise), BlockS: []float64{base}, AttentionS: []float64{0}, MLPS: []float64{0}})
		}
		cmp := engine.SummarizeForTest(passes[0], passes[1])
		if cmp.Verdict != c.verdict || math.Abs(cmp.Ratio/c.ratioNear-1) > 0.03 || !(cmp.RatioLow <= cmp.Ratio && cmp.Ratio <= cmp.RatioHigh) {
			t.Errorf("%s: %s", c.name, cmp.Summary())
		}
	}
}
