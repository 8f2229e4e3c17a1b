package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
)

// The sessions open in a process are counted together: Compare's sibling beside the window's
// session is refused when the two do not fit, naming the other runs' share, and fits again
// once the first is closed.
func TestOpenSessionsCount(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	in := fx.input(t)
	s := engine.Settings{Keep: engine.Keep{Outputs: true}}
	s.MaxMemory = engine.EstimateMemory(ck, in, s).Total() * 3 / 2
	first, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", s, cpuBackend())
	must(t, err)
	if first.Memory.Total() <= 0 || first.Memory.Total() > s.MaxMemory {
		t.Fatalf("the session's estimate %v under --max-memory %d", first.Memory, s.MaxMemory)
	}
	_, err = first.Sibling(context.Background(), s, cpuBackend())
	if err == nil || !strings.Contains(err.Error(), "--max-memory") || !strings.Contains(err.Error(), "held by the other open runs") {
		t.Fatalf("a sibling past --max-memory with the first open: %v", err)
	}
	must(t, first.Close())
	again, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", s, cpuBackend())
	must(t, err)
	must(t, again.Close())
}

// A sweep that could not fit its ablated runs beside the base run is refused before the base
// run (CheckSweep), not after it; where they fit, it is not.
func TestSweepRefusedBeforeItsBaseRun(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	in := fx.input(t)
	s := engine.Settings{Keep: engine.Keep{Outputs: true}}
	est := engine.EstimateMemory(ck, in, s).Total()
	for _, c := range []struct {
		maxMemory int64
		fits      bool
	}{{est * 5 / 4, false}, {est * 4, true}} {
		s.MaxMemory = c.maxMemory
		sess, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", s, cpuBackend())
		must(t, err)
		err = sess.CheckSweep()
		if (err == nil) != c.fits || (err != nil && !strings.Contains(err.Error(), "the sweep's ablated runs")) {
			t.Errorf("--max-memory %d (the run alone %d): %v", c.maxMemory, est, err)
		}
		must(t, sess.Close())
	}
}
