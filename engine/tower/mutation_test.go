package tower_test

import (
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/tower"
)

// mutant wraps a backend and breaks the graph in one of the ways that keep every shape and
// give a fluent wrong model. The parity test must fail on each: that shows it can fail.
type mutant struct {
	backend.Backend
	kind string
}

func (m *mutant) Rope2D(x backend.View, stride int, cos, sin backend.View, seq, heads, headDim int) {
	m.Backend.Rope2D(x, stride, cos, sin, seq, heads, headDim)
	if m.kind == "rope-on-v" && x.Off > 0 { // the k call: rotate v too (it sits D further on)
		m.Backend.Rope2D(x.At(heads*headDim), stride, cos, sin, seq, heads, headDim)
	}
}

func (m *mutant) GELU(x backend.View, n int, form backend.GELUForm) {
	if m.kind == "swap-gelu" {
		form = 1 - form
	}
	m.Backend.GELU(x, n, form)
}

// MatMulEpilogue swaps the fused GELU's form too (the block MLP and the mergers fuse theirs).
func (m *mutant) MatMulEpilogue(y, x backend.View, w, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	if m.kind == "swap-gelu" && ep.GELU {
		ep.Form = 1 - ep.Form
	}
	m.Backend.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
}

func (m *mutant) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	switch m.kind {
	case "qkv-order": // read the thirds as [k | q | v]
		q, k = k, q
	case "qkv-order-v": // read them as [q | v | k]
		k, v = v, k
	}
	m.Backend.Attention(o, q, k, v, stride, segs, heads, headDim, scale)
}

func TestParityCatchesMutations(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	in := fx.input(t)
	for _, kind := range []string{"rope-on-v", "swap-gelu", "qkv-order", "qkv-order-v"} {
		t.Run(kind, func(t *testing.T) {
			run := runTower(t, fx.dir, &mutant{cpuBackend(), kind}, tower.Settings{}, in)
			worst, at := checkParity(t, fx, run, func(s string) string { return s })
			t.Logf("%s: worst relative error %.2e at %s", kind, worst, at)
			if worst <= 1e-5 {
				t.Errorf("mutation %s passes the 1e-5 parity check (worst %.2e): the check cannot see it", kind, worst)
			}
		})
	}
	// The unmutated wrapper passes, so a failure above is the mutation's doing.
	run := runTower(t, fx.dir, &mutant{cpuBackend(), "none"}, tower.Settings{}, in)
	if worst, at := checkParity(t, fx, run, func(s string) string { return s }); worst > 1e-5 {
		t.Errorf("unmutated wrapper fails parity at %s (%.2e)", at, worst)
	}
}
