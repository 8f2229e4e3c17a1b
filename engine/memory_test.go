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
	// the hooks' host copies: a scaled head's copy of attn, a head patch's source and copy
	scaled := base
	scaled.ScaleHead = "1:2=0.5"
	headPatch := base
	headPatch.PatchFrom = "b.png:blocks.1.attn.h2@rows:3"
	SD := int64(in.Patches() * ck.Config.Hidden * 4)
	if s := engine.EstimateMemory(ck, in, scaled); s.Activations-e.Activations != SD {
		t.Errorf("a scaled head adds %d bytes, want its copy of attn, %d", s.Activations-e.Activations, SD)
	}
	if p := engine.EstimateMemory(ck, in, headPatch); p.Activations-e.Activations != 2*SD {
		t.Errorf("a head patch adds %d bytes, want its source and copy of attn, %d", p.Activations-e.Activations, 2*SD)
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

// Over the budget, the taps asked for on request go first (the widest first), then q|k,
// and the notes say which.
func TestFitProbesDropsTapsFirst(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	cfg, S := ck.Config, 176
	probes := engine.ProbeBytes(cfg, S, engine.ProbeTaps)
	keep := engine.Keep{Outputs: true, Attention: true, Taps: engine.TapSetOf(engine.TapLN1, engine.TapFFNAct)}
	for _, c := range []struct {
		budget int64
		want   engine.TapSet
		note   string
	}{
		{probes + engine.TapBytes(cfg, engine.TapLN1, S), engine.ProbeTaps | engine.TapSetOf(engine.TapLN1), "the tap ffn_act probes are off"},
		{probes, engine.ProbeTaps, "the tap ffn_act, tap ln1 probes are off"},
		{probes - 1, engine.TapSetOf(engine.TapOut), "attention (q, k) probes are off"},
		{probes + engine.ProbeBytes(cfg, S, keep.Taps), engine.ProbeTaps | keep.Taps, ""},
	} {
		keep.Budget = c.budget
		sess, err := engine.NewSession(context.Background(), ck, fx.input(t), fx.dir, "", engine.Settings{Keep: keep}, cpuBackend())
		must(t, err)
		if got := sess.Settings.Keep.Taps; got != c.want || sess.Run.Probes == nil {
			t.Errorf("budget %d: keeps %s, want %s", c.budget, got, c.want)
		}
		if got := strings.Join(sess.Notes, "\n"); (c.note == "") != (got == "") || !strings.Contains(got, c.note) {
			t.Errorf("budget %d: notes %q, want %q", c.budget, got, c.note)
		}
		if sess.Settings.Keep.Outputs != c.want.Has(engine.TapOut) || sess.Settings.Keep.Attention != c.want.Has(engine.TapQ) {
			t.Errorf("budget %d: Outputs %v, Attention %v for %s", c.budget, sess.Settings.Keep.Outputs, sess.Settings.Keep.Attention, c.want)
		}
		sess.Close()
	}
}
