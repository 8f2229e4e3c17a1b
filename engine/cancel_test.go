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
	"sync"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/intervene"
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
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	// The cancel lands 200 ms into block 0's attention (seconds of work on 2 threads, about a
	// second on a fast core), whatever the machine's speed; 2 threads, so a many-core machine
	// does not finish it first.
	be := &cancelAtAttention{Backend: cpu.New(2), cancel: func() {
		time.AfterFunc(200*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	}}
	sess, err := engine.NewSession(context.Background(), ck, &engine.Input{Pixels: px, Grids: []geom.Grid{grid}}, fx.dir, "", engine.Settings{Threads: 2}, be)
	must(t, err)
	defer sess.Close()
	err = sess.Step(ctx)
	took := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Step after a cancel: %v (%v after it)", err, took)
	}
	if bound := emulated(1500 * time.Millisecond); took > bound {
		t.Errorf("Step returned %v after the cancel (bound %v)", took, bound)
	}
	if sess.Run.Next() != 0 || sess.Run.Probes.KeptQK() != 0 {
		t.Errorf("a cancelled block counts as run: next %d, kept %d", sess.Run.Next(), sess.Run.Probes.KeptQK())
	}
	t.Logf("returned %v after the cancel", took)
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
	s := engine.Settings{MaxPixels: 2048 * 2048, Threads: 2, Set: intervene.Set{PatchFrom: page + ":blocks.3.out@0,0,64,64"}}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	var cancelled time.Time
	// The cancel lands inside the source's first attention (block 0 of 4), on any machine
	// however fast: the base page runs no block while the session opens.
	be := &cancelAtAttention{Backend: cpu.New(2), cancel: func() { cancelled = time.Now(); cancel() }}
	sess, err := engine.OpenSession(ctx, "../assets/demo", page, s, be)
	took := time.Since(start)
	if err == nil {
		sess.Close()
		t.Fatalf("OpenSession ran its patch source to the end (%v) despite the cancel", took)
	}
	if !errors.Is(err, context.Canceled) || cancelled.IsZero() {
		t.Fatalf("OpenSession after a cancel: %v (cancelled: %v)", err, !cancelled.IsZero())
	}
	if after := time.Since(cancelled); after > emulated(5*time.Second) { // a hang, not a slow machine
		t.Errorf("OpenSession returned %v after the cancel (%v in all)", after, took)
	}
	t.Logf("cancelled %v after the cancel, %v in all", time.Since(cancelled), took)
}

// cancelAtAttention is the CPU backend that cancels once, as its first attention starts.
type cancelAtAttention struct {
	*cpu.Backend
	cancel func()
	once   sync.Once
}

func (b *cancelAtAttention) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	b.once.Do(b.cancel)
	b.Backend.Attention(o, q, k, v, stride, segs, heads, headDim, scale)
}

// emulated is d, or ten times d where the tests run under qemu-user (make test-arm64 sets
// TS_EMULATED): one query tile of the attention takes that much longer there.
func emulated(d time.Duration) time.Duration {
	if os.Getenv("TS_EMULATED") != "" {
		return 10 * d
	}
	return d
}
