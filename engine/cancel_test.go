package engine_test

// cancel_test.go: a cancel takes effect inside a block, not after it: on a page of 16,384
// patches one attention half takes seconds on two cores, and Step returns within moments of
// the cancel.

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
)

func TestCancelInsideABlock(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	grid := geom.Grid{T: 1, H: 128, W: 128} // 16,384 patches in one segment
	r := rand.New(rand.NewPCG(1, 2))
	px := make([]float32, grid.Patches()*ck.Config.PatchDim())
	for i := range px {
		px[i] = float32(r.NormFloat64())
	}
	sess, err := engine.NewSession(ck, &engine.Input{Pixels: px, Grids: []geom.Grid{grid}}, fx.dir, "", engine.Settings{}, cpuBackend())
	must(t, err)
	defer sess.Close()
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	time.AfterFunc(300*time.Millisecond, cancel)
	err = sess.Step(ctx)
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Step after a cancel: %v (took %v)", err, took)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("Step returned %v after it started, %v after the cancel", took, took-300*time.Millisecond)
	}
	if sess.Run.Next() != 0 || sess.Run.Probes.KeptQK() != 0 {
		t.Errorf("a cancelled block counts as run: next %d, kept %d", sess.Run.Next(), sess.Run.Probes.KeptQK())
	}
	t.Logf("cancelled after %v", took)
}
