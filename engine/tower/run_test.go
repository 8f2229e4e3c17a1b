package tower_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/tower"
)

func startTiny(t *testing.T, opts tower.Settings) (*tower.Run, *fixture) {
	t.Helper()
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	eng, err := tower.NewEngine(ck, cpuBackend(), opts)
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	run, err := eng.Start(fx.input(t))
	must(t, err)
	t.Cleanup(run.Close)
	return run, fx
}

// Stepping block by block gives each block's output as it happens, observers included.
func TestStepByStep(t *testing.T) {
	run, fx := startTiny(t, tower.Settings{Residency: ckpt.Pread})
	var seen []int
	run.Observers = append(run.Observers, func(r tower.BlockResult) { seen = append(seen, r.Timing.Block) })
	ctx := context.Background()
	if _, err := run.Finish(ctx); err == nil {
		t.Error("merger ran before the blocks")
	}
	for i := 0; i < 4; i++ {
		if run.Next() != i {
			t.Fatalf("Next = %d, want %d", run.Next(), i)
		}
		res, err := run.Step(ctx)
		must(t, err)
		if e := relErr(run.Hidden(), fx.f32(t, "blk"+string(rune('0'+i)))); e > 1e-5 {
			t.Errorf("block %d after Step: rel %.2e", i, e)
		}
		if len(res.Stats.Norm) != 176 || res.Timing.Block != i || res.Timing.Attention <= 0 || res.Timing.MLP <= 0 {
			t.Errorf("block %d: stats %d, timing %+v", i, len(res.Stats.Norm), res.Timing)
		}
		for p, n := range res.Stats.Norm {
			if n <= 0 || math.IsNaN(float64(res.Stats.Change[p])) || res.Stats.MaxAbs[p] > n {
				t.Fatalf("block %d patch %d: norm %v change %v max %v", i, p, n, res.Stats.Change[p], res.Stats.MaxAbs[p])
			}
		}
	}
	if _, err := run.Step(ctx); err == nil {
		t.Error("Step past the last block succeeded")
	}
	_, err := run.Finish(ctx)
	must(t, err)
	if e := relErr(run.Merger, fx.f32(t, "pooler_output")); e > 1e-5 {
		t.Errorf("merger rel %.2e", e)
	}
	if len(seen) != 4 || seen[3] != 3 {
		t.Errorf("observers saw %v", seen)
	}
}

// Patch statistics are those of the block output: checked against a direct computation.
func TestPatchStats(t *testing.T) {
	run, fx := startTiny(t, tower.Settings{})
	res, err := run.Step(context.Background())
	must(t, err)
	out := fx.f32(t, "blk0")
	embed := run.Embed
	for _, p := range []int{0, 57, 175} {
		var ss, diff, inSS, sum, mx float64
		for j := 0; j < 64; j++ {
			x, e := float64(out[p*64+j]), float64(embed[p*64+j])
			ss, sum, mx = ss+x*x, sum+x, math.Max(mx, math.Abs(x))
			diff, inSS = diff+(x-e)*(x-e), inSS+e*e
		}
		want := []float64{math.Sqrt(ss), sum / 64, mx, math.Sqrt(diff / inSS)}
		got := []float32{res.Stats.Norm[p], res.Stats.Mean[p], res.Stats.MaxAbs[p], res.Stats.Change[p]}
		for k := range want {
			if math.Abs(float64(got[k])-want[k]) > 1e-4*math.Max(1, math.Abs(want[k])) {
				t.Errorf("patch %d stat %d: got %v want %v", p, k, got[k], want[k])
			}
		}
	}
}

// A cancelled context stops a run between ops and says so.
func TestCancel(t *testing.T) {
	run, _ := startTiny(t, tower.Settings{TileRows: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := run.Step(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Step on a cancelled context: %v", err)
	}
	if run.Next() != 0 {
		t.Errorf("a cancelled step advanced to %d", run.Next())
	}
}

// Attention rows are probability rows over the query's own segment only.
func TestAttentionRowShape(t *testing.T) {
	run, _ := startTiny(t, tower.Settings{Keep: tower.Keep{Attention: true}})
	must(t, run.RunAll(context.Background()))
	// Segments: image 24 rows, video 2 x 16 rows, image 120 rows.
	for _, q := range []int{0, 30, 50, 100} {
		row, err := run.Probes.AttentionRow(2, 1, q)
		must(t, err)
		seg := run.Layout.SegmentOf(2, q)
		var sum float64
		for j, p := range row {
			if (j < seg.Start || j >= seg.End) && p != 0 {
				t.Fatalf("query %d attends to %d outside its segment %v", q, j, seg)
			}
			sum += float64(p)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("query %d: row sums to %v", q, sum)
		}
	}
	if _, err := run.Probes.AttentionRow(4, 0, 0); err == nil {
		t.Error("block 4 of 4 gave a row")
	}
}
