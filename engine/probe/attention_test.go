package probe_test

// attention_test.go holds the probes (attention.go, rollout.go, reverse.go, stats.go) to
// brute-force references built in the test: full S x S per-head matrices from AttentionRow on
// the 176-patch fixture (four segments), rollout by plain matrix products, distance and
// entropy by direct loops.
//
// Invariant: the fast, parallel, matrix-free analysis equals the obvious full-matrix
// computation. The mutation that would silently break it: a rollout without the 0.5*I term
// or with the blocks in the wrong order. Both still give probability rows, so only the
// reference comparison (and the explicit "differs from the without-identity and reversed
// products" checks) catches it.
//
// The analysis scores in float32 (one kernel.FMA6x16 or kernel.Dot3x2 chain per score) while
// AttentionRow and the references here use float64 dot products; the comparisons run under
// both kernels (forEachScoreKernel). Measured on the fixture, both kernels (this machine, Zen 3):
// rows against AttentionRow max 4.8e-7 absolute, head-mean rows 1.3e-7, rollout (every query,
// every upTo) 7.7e-8 against the full product, distance and entropy
// 1.7e-8 relative: all within the 1e-6 bounds the float64 version had, which stay. Only the
// peaky page (scores over ~100 nats) needs a looser bound: see TestAttentionRowsPeaky.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/internal/testfixture"
)

const fixtureS = 176

// attentionRow is the reference row: float64 dot products of the kept q|k, a plain softmax
// over the query's segment, zero elsewhere (what the probes compute in float32 scores).
func attentionRow(run *engine.Run, block, head, query int) ([]float32, error) {
	p := run.Probes
	qk, err := p.QK(block)
	if err != nil {
		return nil, err
	}
	if head < 0 || head >= p.Heads || query < 0 || query >= run.Layout.Rows() {
		return nil, fmt.Errorf("head %d / query %d outside %d heads / %d patches", head, query, p.Heads, run.Layout.Rows())
	}
	D, hd := p.Hidden, p.HeadDim
	q := qk[query*2*D+head*hd:][:hd]
	seg := run.Layout.SegmentOf(block, query)
	scale := 1 / math.Sqrt(float64(hd))
	scores := make([]float64, seg.End-seg.Start)
	mx := math.Inf(-1)
	for j := seg.Start; j < seg.End; j++ {
		k := qk[j*2*D+D+head*hd:][:hd]
		var dot float64
		for x := range q {
			dot += float64(q[x]) * float64(k[x])
		}
		scores[j-seg.Start] = dot * scale
		mx = math.Max(mx, dot*scale)
	}
	var z float64
	for j, v := range scores {
		scores[j] = math.Exp(v - mx)
		z += scores[j]
	}
	row := make([]float32, run.Layout.Rows())
	for j, v := range scores {
		row[seg.Start+j] = float32(v / z)
	}
	return row, nil
}

// headStatsAll is HeadStats of every block whose attention is kept.
func headStatsAll(run *engine.Run, ctx context.Context, maxQueries int) (dist, entropy [][]float64, err error) {
	for b := range run.Probes.KeptQK() {
		d, e, err := run.Probes.HeadStats(ctx, b, maxQueries)
		if err != nil {
			return nil, nil, err
		}
		dist, entropy = append(dist, d), append(entropy, e)
	}
	return dist, entropy, nil
}

func openFixture(t testing.TB, name string) *testfixture.Fixture {
	t.Helper()
	return testfixture.Open(t, filepath.Join("..", "testdata", name+".safetensors"))
}

// runTower runs a whole page and returns the run (outputs kept).
func runTower(t testing.TB, dir string, be backend.Backend, opts engine.Settings, in *engine.Input) *engine.Run {
	t.Helper()
	opts.Keep.Outputs = true
	return testfixture.RunAll(t, testfixture.Engine(t, dir, be, opts), in)
}

func cpuBackend() backend.Backend { return cpu.New(0) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// analysisRun runs the fixture page with outputs and attention kept.
func analysisRun(t *testing.T) (*engine.Run, *testfixture.Fixture) {
	t.Helper()
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	run := runTower(t, fx.Dir, cpuBackend(), engine.Settings{Keep: engine.Keep{Attention: true}}, fx.Input(t))
	if run.Layout.Rows() != fixtureS || len(run.Layout.Segments) != 4 {
		t.Fatalf("fixture layout: %d rows, %d segments", run.Layout.Rows(), len(run.Layout.Segments))
	}
	return run, fx
}

// forEachScoreKernel runs f as a subtest per score kernel the analysis can take on this CPU
// (the generic kernel.Dot3x2 always, kernel.FMA6x16 with AVX2+FMA) and restores the start-up
// choice. Not for parallel tests: kernel.UseFMA is package state. Runs made before it keep
// their activations; only the analysis switches kernels.
func forEachScoreKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	kernel.EachKernel(func(name string) { t.Run(name, f) })
}

// headMatrix is A_h of one block as a full S x S matrix (row-major) from AttentionRow.
func headMatrix(t *testing.T, run *engine.Run, block, head int) []float64 {
	t.Helper()
	S := run.Layout.Rows()
	a := make([]float64, S*S)
	for i := range S {
		row, err := attentionRow(run, block, head, i)
		must(t, err)
		for j, p := range row {
			a[i*S+j] = float64(p)
		}
	}
	return a
}

// meanMatrix is mean_h A_h of one block.
func meanMatrix(t *testing.T, run *engine.Run, block int) []float64 {
	H := run.Config().Heads
	var m []float64
	for h := range H {
		a := headMatrix(t, run, block, h)
		if m == nil {
			m = make([]float64, len(a))
		}
		for i, x := range a {
			m[i] += x / float64(H)
		}
	}
	return m
}

// hat is 0.5*M + 0.5*I (identity optional) with every row renormalized to sum to 1.
func hat(m []float64, S int, identity bool) []float64 {
	out := make([]float64, len(m))
	for i := range S {
		var sum float64
		for j := range S {
			x := 0.5 * m[i*S+j]
			if identity && i == j {
				x += 0.5
			}
			out[i*S+j] = x
			sum += x
		}
		for j := range S {
			out[i*S+j] /= sum
		}
	}
	return out
}

func matmul(a, b []float64, S int) []float64 {
	c := make([]float64, S*S)
	for i := range S {
		for k := range S {
			x := a[i*S+k]
			for j := range S {
				c[i*S+j] += x * b[k*S+j]
			}
		}
	}
	return c
}

// product is mats[0] mats[1] ... as a full matrix (plain products).
func product(mats [][]float64, S int) []float64 {
	p := mats[0]
	for _, m := range mats[1:] {
		p = matmul(p, m, S)
	}
	return p
}

func maxDiff64(a []float32, b []float64) float64 {
	var d float64
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-b[i]))
	}
	return d
}

// checkSegmentRow fails unless row is zero outside q's frame and sums to 1 inside.
func checkSegmentRow(t *testing.T, run *engine.Run, what string, q int, row []float32) {
	t.Helper()
	seg := run.Layout.FrameOf(q)
	var sum float64
	for j, p := range row {
		if (j < seg.Start || j >= seg.End) && p != 0 {
			t.Fatalf("%s: query %d has weight %v on %d outside its segment %v", what, q, p, j, seg)
		}
		if p < 0 || p != p {
			t.Fatalf("%s: query %d: weight %v at %d", what, q, p, j)
		}
		sum += float64(p)
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Errorf("%s: query %d sums to %v", what, q, sum)
	}
}

// AttentionRows hands every listed query its AttentionRow, one call at a time.
func TestAttentionRowsMatchAttentionRow(t *testing.T) {
	run, _ := analysisRun(t)
	queries := []int{175, 3, 3, 24, 40, 41, 100}
	for i := range fixtureS {
		queries = append(queries, i)
	}
	forEachScoreKernel(t, func(t *testing.T) { testRowsMatch(t, run, queries) })
	for _, bad := range []struct{ block, head, q int }{{4, 0, 0}, {-1, 0, 0}, {0, 4, 0}, {0, -1, 0}, {0, 0, fixtureS}, {0, 0, -1}} {
		if err := run.Probes.AttentionRows(context.Background(), bad.block, bad.head, []int{bad.q}, func(int, []float32) {}); err == nil {
			t.Errorf("block %d head %d query %d: no error", bad.block, bad.head, bad.q)
		}
	}
}

func testRowsMatch(t *testing.T, run *engine.Run, queries []int) {
	for _, head := range []int{0, 3} {
		seen := map[int]int{}
		var inFlight atomic.Int32
		err := run.Probes.AttentionRows(context.Background(), 2, head, queries, func(q int, row []float32) {
			if inFlight.Add(1) != 1 {
				t.Error("fn calls overlap")
			}
			defer inFlight.Add(-1)
			seen[q]++
			want, err := attentionRow(run, 2, head, q)
			if err != nil {
				t.Error(err) // not Fatal: fn may run on a worker goroutine
				return
			}
			if d := probe.MaxAbsDiff(row, want); d > 1e-6 {
				t.Errorf("head %d query %d: differs from AttentionRow by %.2e", head, q, d)
			}
			row[0] = -1 // the row is the callee's: scribbling on it must not disturb later rows
		})
		must(t, err)
		for _, q := range queries {
			if want := countOf(queries, q); seen[q] != want {
				t.Errorf("head %d: query %d seen %d times, want %d", head, q, seen[q], want)
			}
		}
	}
}

func countOf(xs []int, x int) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// peakyRun runs a synth tiny checkpoint whose qkv weights are large, so attention scores
// spread over hundreds of nats: rows go from ~1 down past the float32 range.
func peakyRun(t *testing.T) *engine.Run {
	t.Helper()
	cfg, err := synth.Preset("tiny")
	must(t, err)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 9))
	fill := func(name string, shape []int) []float32 {
		if !strings.HasSuffix(name, "attn.qkv.weight") {
			return nil
		}
		w := make([]float32, shape[0]*shape[1])
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.6)
		}
		return w
	}
	must(t, synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 2, Fill: fill}))
	g := geom.Grid{T: 1, H: 8, W: 8}
	pix := make([]float32, g.Patches()*cfg.PatchDim())
	for i := range pix {
		pix[i] = float32(rng.NormFloat64())
	}
	return runTower(t, dir, cpuBackend(), engine.Settings{Keep: engine.Keep{Attention: true}}, &engine.Input{Pixels: pix, Grids: []geom.Grid{g}})
}

// On peaky attention every entry, the smallest float32 ones included, agrees with
// AttentionRow to within float32 rounding of the output (3e-7 relative, and one subnormal
// step, 2^-149, where the output is subnormal) plus what float32 scores cost: the exponentials
// hold over the range. A float32 score is off by about 2^-24 times the size of the products it
// sums, and every entry's log by the errors of its own score, of the row's maximum and of
// log z, so the relative error grows with the row's spread in nats R = max_j -ln p_j:
// allowed 8 * 2^-24 * (1 + R). Measured over every block and head of this page, both
// kernels: at most 3.8 * 2^-24 * (1 + R) (R up to ~100 nats, i.e. up to 2.2e-5 relative).
func TestAttentionRowsPeaky(t *testing.T) {
	run := peakyRun(t)
	S := run.Layout.Rows()
	forEachScoreKernel(t, func(t *testing.T) {
		var smallest float32 = 1
		err := run.Probes.AttentionRows(context.Background(), 3, 2, probe.EvenQueries(S, 0), func(q int, row []float32) {
			want, err := attentionRow(run, 3, 2, q)
			if err != nil {
				t.Error(err)
				return
			}
			var spread float64
			for _, w := range want {
				if w > 0 {
					spread = max(spread, -math.Log(float64(w)))
				}
			}
			rel := 3e-7 + 8*0x1p-24*(1+spread)
			for j, p := range row {
				if w := want[j]; math.Abs(float64(p-w)) > rel*float64(w)+0x1p-149 {
					t.Errorf("query %d key %d: %g, AttentionRow %g (allowed %.2g relative)", q, j, p, w, rel)
					return
				}
				if p > 0 {
					smallest = min(smallest, p)
				}
			}
		})
		must(t, err)
		if smallest > 1e-30 {
			t.Errorf("the peaky page is not peaky: smallest weight %g", smallest)
		}
	})
}

// A done context stops AttentionRows before it has seen every query.
func TestAttentionRowsCancel(t *testing.T) {
	run, _ := analysisRun(t)
	queries := probe.EvenQueries(fixtureS, 0)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := run.Probes.AttentionRows(ctx, 1, 0, queries, func(int, []float32) {
		calls++
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled mid-way: err %v", err)
	}
	if calls == 0 || calls >= len(queries)/2 {
		t.Errorf("cancelled after the first row, yet %d of %d rows came", calls, len(queries))
	}
	calls = 0
	if err := run.Probes.AttentionRows(ctx, 1, 0, queries, func(int, []float32) { calls++ }); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("done context: err %v, %d rows", err, calls)
	}
}

// The head-mean row is the mean of the heads' rows, a probability row over the segment.
func TestAttentionRowMean(t *testing.T) {
	run, _ := analysisRun(t)
	H := run.Config().Heads
	forEachScoreKernel(t, func(t *testing.T) {
		for _, q := range []int{0, 23, 24, 45, 60, 175} {
			got, err := run.Probes.AttentionRowMean(3, q)
			must(t, err)
			want := make([]float64, fixtureS)
			for h := range H {
				row, err := attentionRow(run, 3, h, q)
				must(t, err)
				for j, p := range row {
					want[j] += float64(p) / float64(H)
				}
			}
			if d := maxDiff64(got, want); d > 1e-6 {
				t.Errorf("query %d: mean row off by %.2e", q, d)
			}
			checkSegmentRow(t, run, "mean row", q, got)
			head0, _ := attentionRow(run, 3, 0, q)
			if probe.MaxAbsDiff(got, head0) < 1e-3 {
				t.Errorf("query %d: the mean row is head 0's row", q)
			}
		}
	})
	if _, err := run.Probes.AttentionRowMean(4, 0); err == nil {
		t.Error("block 4 of 4 gave a mean row")
	}
	if _, err := run.Probes.AttentionRowMean(0, fixtureS); err == nil {
		t.Error("query past the page gave a mean row")
	}
}

// Rollout equals row q of Â_L ... Â_0 built from full matrices, and not the products
// without the identity term, in reverse order, or the raw last-block mean.
func TestRolloutMatchesFullProduct(t *testing.T) {
	run, _ := analysisRun(t)
	S, depth := fixtureS, run.Config().Depth
	var means [][]float64
	for b := range depth {
		means = append(means, meanMatrix(t, run, b))
	}
	hats := func(upTo int, identity, reversed bool) [][]float64 {
		var ms [][]float64
		for b := upTo; b >= 0; b-- { // Â_upTo first: row q of Â_upTo ... Â_0
			ms = append(ms, hat(means[b], S, identity))
		}
		if reversed {
			slices.Reverse(ms)
		}
		return ms
	}
	forEachScoreKernel(t, func(t *testing.T) {
		for _, upTo := range []int{0, 1, depth - 1} {
			ref := product(hats(upTo, true, false), S)
			noIdentity := product(hats(upTo, false, false), S)
			reversed := product(hats(upTo, true, true), S)
			for _, q := range []int{0, 30, 50, 100, 175} {
				got, err := run.Probes.Rollout(context.Background(), q, upTo)
				must(t, err)
				if d := maxDiff64(got, ref[q*S:(q+1)*S]); d > 1e-6 {
					t.Errorf("up to %d, query %d: rollout off the full product by %.2e", upTo, q, d)
				}
				checkSegmentRow(t, run, "rollout", q, got)
				if d := maxDiff64(got, noIdentity[q*S:(q+1)*S]); d < 1e-3 {
					t.Errorf("up to %d, query %d: rollout equals the product without the identity (%.2e)", upTo, q, d)
				}
				if upTo > 0 {
					if d := maxDiff64(got, reversed[q*S:(q+1)*S]); d < 1e-4 {
						t.Errorf("up to %d, query %d: rollout equals the reversed product (%.2e)", upTo, q, d)
					}
				}
				raw, err := run.Probes.AttentionRowMean(upTo, q)
				must(t, err)
				if d := probe.MaxAbsDiff(got, raw); d < 1e-3 {
					t.Errorf("up to %d, query %d: rollout is the raw mean row (%.2e)", upTo, q, d)
				}
			}
		}
	})
	for _, bad := range [][2]int{{0, depth}, {0, -1}, {-1, 0}, {S, 0}} {
		if _, err := run.Probes.Rollout(context.Background(), bad[0], bad[1]); err == nil {
			t.Errorf("query %d up to %d: no error", bad[0], bad[1])
		}
	}
}

// Rollout is bit-identical whatever the number of cores, and a done context stops it.
func TestRolloutDeterministicAndCancellable(t *testing.T) {
	run, _ := analysisRun(t)
	forEachScoreKernel(t, func(t *testing.T) {
		ref, err := run.Probes.Rollout(context.Background(), 100, 3)
		must(t, err)
		ds, es, err := run.Probes.HeadStats(context.Background(), 2, 0)
		must(t, err)
		prev := runtime.GOMAXPROCS(1)
		defer runtime.GOMAXPROCS(prev)
		for _, procs := range []int{1, 3} {
			runtime.GOMAXPROCS(procs)
			got, err := run.Probes.Rollout(context.Background(), 100, 3)
			must(t, err)
			if !numcheck.BitEqual(got, ref) {
				t.Errorf("GOMAXPROCS %d: rollout differs by %.2e", procs, probe.MaxAbsDiff(got, ref))
			}
			d, e, err := run.Probes.HeadStats(context.Background(), 2, 0)
			must(t, err)
			if !slices.Equal(d, ds) || !slices.Equal(e, es) {
				t.Errorf("GOMAXPROCS %d: head stats differ", procs)
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := run.Probes.Rollout(ctx, 100, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("rollout on a done context: %v", err)
	}
	if _, _, err := run.Probes.HeadStats(ctx, 2, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("head stats on a done context: %v", err)
	}
	if _, _, err := headStatsAll(run, ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("all head stats on a done context: %v", err)
	}
}

// headStatsRef computes distance and entropy per head by direct loops over AttentionRow.
func headStatsRef(t *testing.T, run *engine.Run, block int, queries []int) (dist, ent []float64) {
	H := run.Config().Heads
	dist, ent = make([]float64, H), make([]float64, H)
	for h := range H {
		for _, q := range queries {
			row, err := attentionRow(run, block, h, q)
			must(t, err)
			pq := run.Layout.Pos[q]
			for j, p := range row {
				if p == 0 {
					continue
				}
				pj := run.Layout.Pos[j]
				dr, dc := float64(pq.Row-pj.Row), float64(pq.Col-pj.Col)
				dist[h] += float64(p) * math.Hypot(dr, dc)
				ent[h] -= float64(p) * math.Log(float64(p))
			}
		}
		dist[h] /= float64(len(queries))
		ent[h] /= float64(len(queries))
	}
	return dist, ent
}

func relDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i])/math.Max(math.Abs(b[i]), 1e-12))
	}
	return d
}

// Distance and entropy equal the direct loops, over all queries and over a sample.
func TestHeadStatsMatchLoops(t *testing.T) {
	run, _ := analysisRun(t)
	forEachScoreKernel(t, func(t *testing.T) {
		for _, block := range []int{0, 3} {
			for _, maxQ := range []int{0, 10, 1} {
				qs := probe.EvenQueries(fixtureS, maxQ)
				d, e, err := run.Probes.HeadStats(context.Background(), block, maxQ)
				must(t, err)
				rd, re := headStatsRef(t, run, block, qs)
				if x := relDiff(d, rd); x > 1e-6 {
					t.Errorf("block %d, %d queries: distance %v, want %v", block, maxQ, d, rd)
				}
				if x := relDiff(e, re); x > 1e-6 {
					t.Errorf("block %d, %d queries: entropy %v, want %v", block, maxQ, e, re)
				}
				for h := range d {
					if d[h] <= 0 || e[h] <= 0 || e[h] > math.Log(120) {
						t.Errorf("block %d head %d: distance %v entropy %v", block, h, d[h], e[h])
					}
				}
			}
		}
	})
	// The sample is a different average: it must not quietly use every query.
	dAll, _, _ := run.Probes.HeadStats(context.Background(), 0, 0)
	dTen, _, _ := run.Probes.HeadStats(context.Background(), 0, 10)
	if relDiff(dAll, dTen) < 1e-4 {
		t.Error("10 sampled queries give the all-query distances")
	}
	dist, ent, err := headStatsAll(run, context.Background(), 10)
	must(t, err)
	if len(dist) != 4 || len(ent) != 4 {
		t.Fatalf("all blocks: %d x %d", len(dist), len(ent))
	}
	for b := range 4 {
		d, e, _ := run.Probes.HeadStats(context.Background(), b, 10)
		if !slices.Equal(dist[b], d) || !slices.Equal(ent[b], e) {
			t.Errorf("block %d: HeadStatsAll differs from HeadStats", b)
		}
	}
	if _, _, err := run.Probes.HeadStats(context.Background(), 4, 0); err == nil {
		t.Error("block 4 of 4 gave head stats")
	}
}

// EvenQueries spreads at most max distinct queries evenly, all of them when max allows.
func TestEvenQueries(t *testing.T) {
	for _, c := range []struct{ n, max int }{{176, 0}, {176, 176}, {176, 500}, {176, 10}, {176, 1}, {1024, 256}, {7, 3}} {
		qs := probe.EvenQueries(c.n, c.max)
		want := c.n
		if c.max > 0 && c.max < c.n {
			want = c.max
		}
		if len(qs) != want {
			t.Fatalf("%d of %d: %d queries", c.max, c.n, len(qs))
		}
		step := float64(c.n) / float64(want)
		for k, q := range qs {
			if q < 0 || q >= c.n || (k > 0 && q <= qs[k-1]) {
				t.Fatalf("%d of %d: %v not increasing inside the range", c.max, c.n, qs)
			}
			if centre := (float64(k) + 0.5) * step; math.Abs(float64(q)-centre) > 1 {
				t.Fatalf("%d of %d: query %d is %d, slice centre %.1f", c.max, c.n, k, q, centre)
			}
		}
	}
}

// topKRef picks the largest remaining value k times (lowest index on ties, NaN last).
func topKRef(row []float32, k int) []int {
	used := make([]bool, len(row))
	var out []int
	for len(out) < min(k, len(row)) {
		best := -1
		for i, x := range row {
			if used[i] {
				continue
			}
			if best < 0 || (row[best] != row[best] && x == x) || x > row[best] {
				best = i
			}
		}
		used[best] = true
		out = append(out, best)
	}
	return out
}

func TestTopK(t *testing.T) {
	nan := float32(math.NaN())
	row := []float32{0.1, 0.5, nan, 0.5, 0.2, 0.9, 0.2}
	if got := probe.TopK(row, 4); !slices.Equal(got, []int{5, 1, 3, 4}) {
		t.Errorf("TopK = %v, want [5 1 3 4]", got)
	}
	if got := probe.TopK(row, 10); !slices.Equal(got, []int{5, 1, 3, 4, 6, 0, 2}) {
		t.Errorf("TopK past the length = %v", got)
	}
	if got := probe.TopK(row, 0); len(got) != 0 {
		t.Errorf("TopK 0 = %v", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		r := make([]float32, 1+rng.IntN(60))
		for i := range r {
			r[i] = float32(rng.IntN(8)) // many ties
		}
		k := rng.IntN(len(r) + 2)
		if got, want := probe.TopK(r, k), topKRef(r, k); !slices.Equal(got, want) {
			t.Fatalf("TopK(%v, %d) = %v, want %v", r, k, got, want)
		}
	}
	// On a real attention row the top patch is the row's maximum.
	run, _ := analysisRun(t)
	ar, _ := attentionRow(run, 3, 1, 100)
	top := probe.TopK(ar, 3)
	if slices.Max(ar) != ar[top[0]] || ar[top[1]] > ar[top[0]] || ar[top[2]] > ar[top[1]] {
		t.Errorf("top 3 %v of an attention row", top)
	}
}

// ChannelMap is the channel column of the block output, as transformers computed it.
func TestChannelMap(t *testing.T) {
	run, fx := analysisRun(t)
	ref := fx.F32(t, "blk2")
	for _, ch := range []int{0, 17, 63} {
		m, err := run.Probes.ChannelMap(2, ch)
		must(t, err)
		if len(m) != fixtureS {
			t.Fatalf("map of %d patches", len(m))
		}
		col := make([]float32, fixtureS)
		for p := range col {
			col[p] = ref[p*64+ch]
		}
		if e := numcheck.RelErr(m, col); e > 1e-5 {
			t.Errorf("channel %d: rel %.2e against transformers' block 2", ch, e)
		}
	}
	for _, bad := range [][2]int{{4, 0}, {-1, 0}, {0, 64}, {0, -1}} {
		if _, err := run.Probes.ChannelMap(bad[0], bad[1]); err == nil {
			t.Errorf("block %d channel %d: no error", bad[0], bad[1])
		}
	}
}

func TestHistogram(t *testing.T) {
	inf := float32(math.Inf(1))
	counts, lo, hi := probe.Histogram([]float32{4, 0, 1, 2, 3, float32(math.NaN()), inf, -inf}, 4)
	if !slices.Equal(counts, []int{1, 1, 1, 2}) || lo != 0 || hi != 4 {
		t.Errorf("Histogram = %v over [%v, %v], want [1 1 1 2] over [0, 4]", counts, lo, hi)
	}
	if c, lo, hi := probe.Histogram([]float32{2, 2, 2}, 3); !slices.Equal(c, []int{3, 0, 0}) || lo != 2 || hi != 2 {
		t.Errorf("constant values: %v [%v, %v]", c, lo, hi)
	}
	if c, lo, hi := probe.Histogram(nil, 2); !slices.Equal(c, []int{0, 0}) || lo != 0 || hi != 0 {
		t.Errorf("no values: %v [%v, %v]", c, lo, hi)
	}
	if c, _, _ := probe.Histogram([]float32{1}, 0); c != nil {
		t.Errorf("0 bins: %v", c)
	}
	// Against edge comparisons on random values.
	rng := rand.New(rand.NewPCG(3, 4))
	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64()*3 - 1)
	}
	counts, lo, hi = probe.Histogram(vals, 7)
	if lo != slices.Min(vals) || hi != slices.Max(vals) {
		t.Errorf("range [%v, %v], want [%v, %v]", lo, hi, slices.Min(vals), slices.Max(vals))
	}
	w := (float64(hi) - float64(lo)) / 7
	want := make([]int, 7)
	for _, x := range vals {
		for b := range 7 {
			if float64(x) >= float64(lo)+float64(b)*w && (float64(x) < float64(lo)+float64(b+1)*w || b == 6) {
				want[b]++
				break
			}
		}
	}
	if !slices.Equal(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
}

func TestSummary(t *testing.T) {
	mean, std, lo, hi := probe.Summary([]float32{4, 1, 3, 2})
	if mean != 2.5 || math.Abs(std-math.Sqrt(1.25)) > 1e-15 || lo != 1 || hi != 4 {
		t.Errorf("Summary = %v %v %v %v, want 2.5 %v 1 4", mean, std, lo, hi, math.Sqrt(1.25))
	}
	if m, s, lo, hi := probe.Summary(nil); m != 0 || s != 0 || lo != 0 || hi != 0 {
		t.Errorf("empty: %v %v %v %v", m, s, lo, hi)
	}
	if m, _, _, _ := probe.Summary([]float32{1, float32(math.NaN())}); !math.IsNaN(m) {
		t.Errorf("a NaN is hidden: mean %v", m)
	}
}

// TopChannels ranks channels by mean |x| over patches, ties by the lower channel.
func TestTopChannels(t *testing.T) {
	run, _ := analysisRun(t)
	out, err := run.Probes.Output(1)
	must(t, err)
	D := 64
	means := make([]float64, D)
	for p := range fixtureS {
		for c := range D {
			means[c] += math.Abs(float64(out[p*D+c])) / fixtureS
		}
	}
	got := probe.TopChannelsOf(out, D, 5)
	if len(got) != 5 {
		t.Fatalf("%d channels", len(got))
	}
	for i, cs := range got {
		if math.Abs(cs.MeanAbs-means[cs.Channel]) > 1e-9*means[cs.Channel] {
			t.Errorf("channel %d: mean |x| %v, want %v", cs.Channel, cs.MeanAbs, means[cs.Channel])
		}
		for c, m := range means { // nothing outside the top beats the i-th
			if !slices.ContainsFunc(got[:i+1], func(s probe.ChannelScore) bool { return s.Channel == c }) && m > cs.MeanAbs {
				t.Errorf("rank %d is channel %d (%v) but channel %d has %v", i, cs.Channel, cs.MeanAbs, c, m)
			}
		}
	}
	// Two channels made identical and dominant: the lower one ranks first.
	edited := slices.Clone(out)
	for p := range fixtureS {
		edited[p*D+40], edited[p*D+9] = 100, -100
	}
	got = probe.TopChannelsOf(edited, D, 2)
	if got[0].Channel != 9 || got[1].Channel != 40 || got[0].MeanAbs != 100 {
		t.Errorf("tied channels ranked %v", got)
	}
	if all := probe.TopChannelsOf(out, D, 1000); len(all) != D {
		t.Errorf("k past the width: %d channels", len(all))
	}
	// TopChannelsOf on a raw [rows, width] slice: columns 2 > 0 > 1 by mean |x|.
	raw := []float32{1, 0, -3, -1, 0.5, 2, 1, 0, 3}
	if got := probe.TopChannelsOf(raw, 3, 3); len(got) != 3 || got[0] != (probe.ChannelScore{Channel: 2, MeanAbs: 8.0 / 3}) ||
		got[1] != (probe.ChannelScore{Channel: 0, MeanAbs: 1}) || got[2] != (probe.ChannelScore{Channel: 1, MeanAbs: 0.5 / 3}) {
		t.Errorf("TopChannelsOf = %v", got)
	}
	if got := probe.TopChannelsOf(raw, 3, 0); len(got) != 0 {
		t.Errorf("k 0: %v", got)
	}
	if _, err := run.Probes.Output(4); err == nil {
		t.Error("block 4 of 4 gave an output")
	}
}

func TestMaxAbsDiff(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 2, 3}, []float32{1, 2.5, 2}, 1},
		{[]float32{-1, 0}, []float32{1, 0}, 2},
		{[]float32{nan, inf}, []float32{nan, inf}, 0},
		{[]float32{0, nan}, []float32{0, 1}, math.Inf(1)},
		{[]float32{inf}, []float32{-inf}, math.Inf(1)},
		{[]float32{1}, []float32{1, 2}, math.Inf(1)},
		{nil, nil, 0},
	} {
		if got := probe.MaxAbsDiff(c.a, c.b); got != c.want {
			t.Errorf("MaxAbsDiff(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// CompareOutputs finds a difference in the block it was put in; CompareRuns refuses other
// shapes and unfinished runs.
func TestCompareRuns(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	in := fx.Input(t)
	a := runTower(t, fx.Dir, cpuBackend(), engine.Settings{TileRows: 48}, in)
	b := runTower(t, fx.Dir, cpuBackend(), engine.Settings{Residency: engine.Pread}, in)
	per, merger, err := engine.CompareRuns(a, b)
	must(t, err)
	if len(per) != 4 || slices.Max(per) != 0 || merger != 0 {
		t.Errorf("tile 48 mapped against tile 512 pread: %v, merger %v (want bit-identical)", per, merger)
	}
	edited := b.Probes.Outputs()
	edited[2] = slices.Clone(edited[2])
	edited[2][77] += 0.5
	mergerB := slices.Clone(b.Merger)
	mergerB[5] -= 0.25
	per, err = probe.CompareOutputs(a.Probes.Outputs(), edited)
	must(t, err)
	merger = probe.MaxAbsDiff(a.Merger, mergerB)
	if per[0] != 0 || per[1] != 0 || per[3] != 0 || math.Abs(per[2]-0.5) > 1e-6 || math.Abs(merger-0.25) > 1e-6 {
		t.Errorf("one value moved by 0.5 in block 2, one by 0.25 in the merger: %v, %v", per, merger)
	}
	// Another page (the first grid alone): other shapes.
	small := &engine.Input{Pixels: in.Pixels[:24*1536], Grids: in.Grids[:1]}
	c := runTower(t, fx.Dir, cpuBackend(), engine.Settings{}, small)
	if _, _, err := engine.CompareRuns(a, c); err == nil {
		t.Error("runs of 176 and 24 patches compared")
	}
	// An unfinished run.
	ck, err := engine.OpenCheckpoint(fx.Dir)
	must(t, err)
	eng, err := engine.NewEngine(ck, cpuBackend(), engine.Settings{Keep: engine.Keep{Outputs: true}})
	must(t, err)
	defer eng.Close()
	d, err := eng.Start(in)
	must(t, err)
	defer d.Close()
	_, err = d.Step(context.Background())
	must(t, err)
	if _, _, err := engine.CompareRuns(a, d); err == nil {
		t.Error("an unfinished run compared")
	}
}
