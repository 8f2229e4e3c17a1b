package engine_test

// timing_test.go: a timing is the work's own time. Stepping with long pauses between the
// blocks (as a user who reads each block does) puts none of the pause into any half, any
// block's wall time or any total. The check is exact, whatever the machine's speed (qemu
// runs a block slower than the pause): each recorded time is at most the host-clock time of
// the call that did the work, and the totals at most the sum of those calls.

import (
	"context"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine"
)

func TestPausesAreNotTimed(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	const pause = time.Second
	for _, mode := range []engine.ResidencyMode{engine.Mapped, engine.Pread} {
		ck, err := engine.OpenCheckpoint(fx.dir)
		must(t, err)
		began := time.Now()
		sess, err := engine.NewSession(context.Background(), ck, fx.input(t), fx.dir, "", engine.Settings{Residency: mode}, cpuBackend())
		must(t, err)
		defer sess.Close()
		calls := time.Since(began) // the host time of every call that did work, summed
		time.Sleep(pause)          // after the start, before block 0
		var steps []time.Duration
		for !sess.Run.Finished() {
			began := time.Now()
			must(t, sess.Step(context.Background()))
			steps = append(steps, time.Since(began))
			calls += steps[len(steps)-1]
			time.Sleep(pause)
		}
		if len(steps) != len(sess.Run.Timings)+1 { // one Step per block, and one for the merger
			t.Fatalf("%s: %d Step calls ran %d blocks", mode, len(steps), len(sess.Run.Timings))
		}
		for i, bt := range sess.Run.Timings {
			for what, d := range map[string]time.Duration{"wait": bt.Wait, "attention": bt.Attention, "mlp": bt.MLP,
				"attention+mlp": bt.Attention + bt.MLP, "wall": bt.Wall} {
				if d > steps[i] {
					t.Errorf("%s block %d: %s %v, longer than its Step call (%v): it holds a pause", mode, bt.Block, what, d, steps[i])
				}
			}
		}
		tot := sess.Report.Totals
		limit := float64(calls.Microseconds()) / 1000
		for what, ms := range map[string]float64{"wall": tot.WallMS, "attention": tot.AttentionMS, "mlp": tot.MLPMS, "wait": tot.WaitMS,
			"embed": sess.Report.EmbedMS, "merger": sess.Report.MergerMS} {
			if ms > limit {
				t.Errorf("%s: report %s %.3f ms, more than the calls that did the work (%.3f ms): it holds a pause", mode, what, ms, limit)
			}
		}
	}
}
