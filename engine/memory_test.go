package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
)

// A run past the memory limit is refused before anything is allocated, with what it would
// hold; the estimate counts the tile at min(tile, patches) and pread's slots, not the span.
func TestMemoryEstimate(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	in := fx.input(t)
	base := engine.Settings{TileRows: 512}
	e := engine.EstimateMemory(ck, in, base)
	if e.Weights != ck.VisionBytes() || e.Activations <= 0 || e.Total() <= e.Weights {
		t.Errorf("mapped estimate %+v (vision weights %d)", e, ck.VisionBytes())
	}
	huge := base
	huge.TileRows = 1 << 20
	if engine.EstimateMemory(ck, in, huge) != e {
		t.Errorf("a tile past the page changed the estimate (the tile holds min(tile, patches) rows)")
	}
	pread := base
	pread.Residency, pread.Slots = engine.Pread, 2
	if p := engine.EstimateMemory(ck, in, pread); p.Weights >= e.Weights {
		t.Errorf("pread holds %d bytes of weights, mapped %d (4 blocks, 2 slots)", p.Weights, e.Weights)
	}
	keep := base
	keep.Keep = engine.Keep{Outputs: true, Attention: true}
	if k := engine.EstimateMemory(ck, in, keep); k.Probes != engine.ProbeBytes(ck.Config, in.Patches(), engine.ProbeTaps) {
		t.Errorf("probes %d, want %d", k.Probes, engine.ProbeBytes(ck.Config, in.Patches(), engine.ProbeTaps))
	}
	limited := base
	limited.MaxMemory = 1 << 20
	_, err = engine.NewSession(context.Background(), ck, in, fx.dir, "", limited, cpuBackend())
	if err == nil || !strings.Contains(err.Error(), "would hold about") || !strings.Contains(err.Error(), "weights") {
		t.Fatalf("a run over a 1 MiB limit: %v", err)
	}
	sess, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", base, cpuBackend())
	must(t, err)
	sess.Close()
}
