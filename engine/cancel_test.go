package engine_test

// cancel_test.go: a cancel takes effect inside a block, not after it: on a page of 16,384
// patches one attention half takes seconds on two cores, and Step returns within moments of
// the cancel.

import (
	"context"
	"errors"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	sess, err := engine.NewSession(context.Background(), ck, &engine.Input{Pixels: px, Grids: []geom.Grid{grid}}, fx.dir, "", engine.Settings{}, cpuBackend())
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

// An activation patch's source image runs inside OpenSession (to the patched block); a cancel
// stops it as it stops any run, not after the source's blocks have all run.
func TestCancelWhileThePatchSourceRuns(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.png")
	img := image.NewNRGBA(image.Rect(0, 0, 2048, 2048)) // 16,384 patches of the demo
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	f, err := os.Create(page)
	must(t, err)
	must(t, (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(f, img))
	must(t, f.Close())
	s := engine.Settings{MaxPixels: 2048 * 2048, PatchFrom: page + ":blocks.3.out@0,0,64,64"}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	var cancelled time.Time
	time.AfterFunc(500*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	sess, err := engine.OpenSession(ctx, "../assets/demo", page, s, cpuBackend())
	took := time.Since(start)
	if err == nil {
		sess.Close()
		t.Fatalf("OpenSession ran its patch source to the end (%v) despite the cancel", took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenSession after a cancel: %v", err)
	}
	if after := time.Since(cancelled); after > 2*time.Second {
		t.Errorf("OpenSession returned %v after the cancel (%v in all)", after, took)
	}
	t.Logf("cancelled %v after the cancel, %v in all", time.Since(cancelled), took)
}
