package probe_test

// bench_test.go times the heavy analyses on a larger page than the fixture: the
// synth "tiny" preset (4 blocks, D 64, 4 heads) on one random 32 x 32 grid (1,024 patches,
// one segment, head_dim 16), reported as ms per call. The scores run through the kernel
// UseFMA picks at start-up (FMA6x16 on AVX2+FMA), so at this small head_dim the float64 exp
// and softmax dominate; at head_dim 72 the scores are a larger share.
//
// Invariant: the timed page is one segment of 1,024 patches with every block's attention
// kept, so a rollout really does all 4 x 1,024 rows of every head. The mutation that would
// silently break it: a grid split into segments (or attention not kept), which would make
// every number look fast and measure nothing.

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/engine/synth"
)

func benchRun(b *testing.B) *engine.Run {
	b.Helper()
	cfg, err := synth.Preset("tiny")
	must(b, err)
	dir := b.TempDir()
	must(b, synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 11}))
	g := geom.Grid{T: 1, H: 32, W: 32}
	rng := rand.New(rand.NewPCG(5, 6))
	pix := make([]float32, g.Patches()*cfg.PatchDim())
	for i := range pix {
		pix[i] = float32(rng.NormFloat64())
	}
	run := runTower(b, dir, cpuBackend(), engine.Settings{Keep: engine.Keep{Attention: true}}, &engine.Input{Pixels: pix, Grids: []geom.Grid{g}})
	if len(run.Layout.Segments) != 1 || run.Layout.Rows() != 1024 {
		b.Fatalf("page: %d segments, %d rows", len(run.Layout.Segments), run.Layout.Rows())
	}
	return run
}

func reportMs(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
}

// BenchmarkRollout: one query through all 4 blocks (every row of every head of each block).
func BenchmarkRollout(b *testing.B) {
	run := benchRun(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := run.Probes.Rollout(ctx, 500, 3); err != nil {
			b.Fatal(err)
		}
	}
	reportMs(b)
}

// BenchmarkHeadStats: distance and entropy of one block over all 1,024 queries.
func BenchmarkHeadStats(b *testing.B) {
	run := benchRun(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := run.Probes.HeadStats(ctx, 3, 0); err != nil {
			b.Fatal(err)
		}
	}
	reportMs(b)
}

// BenchmarkHeadStatsSampled: the same with 256 evenly spaced queries.
func BenchmarkHeadStatsSampled(b *testing.B) {
	run := benchRun(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := run.Probes.HeadStats(ctx, 3, 256); err != nil {
			b.Fatal(err)
		}
	}
	reportMs(b)
}

// BenchmarkAttentionRowMean: one click's head-mean row.
func BenchmarkAttentionRowMean(b *testing.B) {
	run := benchRun(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := run.Probes.AttentionRowMean(3, 500); err != nil {
			b.Fatal(err)
		}
	}
	reportMs(b)
}

// BenchmarkPatchStats: a block's per-patch statistics at 1,024 patches of 1,152, one thread
// (the host work after every block).
func BenchmarkPatchStats(b *testing.B) {
	const S, d = 1024, 1152
	r := rand.New(rand.NewPCG(5, 6))
	in, out := make([]float32, S*d), make([]float32, S*d)
	for i := range out {
		in[i], out[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	b.ResetTimer()
	for range b.N {
		probe.NewPatchStats(in, out, d, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(S*d), "ns/elem")
}
