package engine_test

// timing_test.go: a timing is the work's own time. Stepping with long pauses between the
// blocks (as a user who reads each block does) puts none of the pause into any half, any
// block's wall time or any total.

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
		sess, err := engine.NewSession(ck, fx.input(t), fx.dir, "", engine.Settings{Residency: mode}, cpuBackend())
		must(t, err)
		defer sess.Close()
		time.Sleep(pause) // after the start, before block 0
		for !sess.Run.Finished() {
			must(t, sess.Step(context.Background()))
			time.Sleep(pause)
		}
		for _, bt := range sess.Run.Timings {
			for what, d := range map[string]time.Duration{"wait": bt.Wait, "attention": bt.Attention, "mlp": bt.MLP, "wall": bt.Wall} {
				if d >= pause/2 {
					t.Errorf("%s block %d: %s %v holds a pause", mode, bt.Block, what, d)
				}
			}
		}
		tot := sess.Report.Totals
		for what, ms := range map[string]float64{"wall": tot.WallMS, "attention": tot.AttentionMS, "mlp": tot.MLPMS, "wait": tot.WaitMS,
			"embed": sess.Report.EmbedMS, "merger": sess.Report.MergerMS} {
			if ms >= float64(pause/2/time.Millisecond) {
				t.Errorf("%s: report %s %.0f ms holds a pause", mode, what, ms)
			}
		}
	}
}
