package tower_test

import (
	"fmt"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/tower"
)

// Qwen2-VL's tiny tower (4 blocks of 64, mlp_ratio 2, quick_gelu, no position table, no
// patch bias; the same three grids as Qwen3-VL's fixture, patches of 14) against
// transformers 5.17 in float32: every block output, the last hidden state, the merger, and
// the attention rows of six queries in every block, mapped and pread bit-identical.
func TestParityQwen2VL(t *testing.T) { checkFamilyParity(t, "qwen2vl_vision_tiny_f32", nil) }

// checkFamilyParity runs a family's tower fixture mapped and pread with attention kept and
// compares with transformers: every block output, the embedding, the merger within 1e-5, the
// attention rows (checkFixtureRows), and mapped and pread bit for bit; more (if not nil)
// checks each run further.
func checkFamilyParity(t *testing.T, name string, more func(*fixture, *tower.Run)) {
	fx := openFixture(t, name)
	var outs [][]float32
	for _, res := range []ckpt.ResidencyMode{ckpt.Mapped, ckpt.Pread} {
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Residency: res, Keep: tower.Keep{Attention: true}}, fx.input(t))
		if more != nil {
			more(fx, run)
		}
		for i, o := range run.Probes.Outputs() {
			if e := relErr(o, fx.f32(t, fmt.Sprintf("blk%d", i))); e > 1e-5 {
				t.Errorf("%v block %d: relative error %.3e > 1e-5 against transformers", res, i, e)
			}
		}
		e := relErr(run.Merger, fx.f32(t, "pooler_output"))
		t.Logf("%v: merger relative error %.2e", res, e)
		if e > 1e-5 {
			t.Errorf("%v merger: relative error %.3e > 1e-5", res, e)
		}
		if e := relErr(run.Embed, fx.f32(t, "embed")); e > 1e-5 {
			t.Errorf("%v embedding: relative error %.3e > 1e-5", res, e)
		}
		checkFixtureRows(t, fx, run)
		outs = append(outs, run.Merger)
		outs = append(outs, run.Probes.Outputs()...)
	}
	half := len(outs) / 2
	for i := range half {
		if !bitEqual(outs[i], outs[half+i]) {
			t.Errorf("output %d: mapped and pread differ in bits", i)
		}
	}
}

// checkFixtureRows compares the probes' attention rows with the fixture's
// q{N}.blk{i}.attn_row [H, S] (transformers' own segments), within 1e-5 absolute.
func checkFixtureRows(t *testing.T, fx *fixture, run *tower.Run) {
	t.Helper()
	S, H := run.Layout.Rows(), run.Probes.Heads
	for b := range run.Next() {
		for _, q := range []int{0, 5, 27, 40, 100, 175} {
			want := fx.f32(t, fmt.Sprintf("q%d.blk%d.attn_row", q, b))
			for h := range H {
				got, err := run.Probes.AttentionRow(b, h, q)
				must(t, err)
				for j := range S {
					if d := float64(got[j] - want[h*S+j]); d > 1e-5 || d < -1e-5 {
						t.Fatalf("block %d head %d query %d key %d: %g, transformers %g", b, h, q, j, got[j], want[h*S+j])
					}
				}
			}
		}
	}
}

// formSwap runs the matmul epilogue's activation from as to: the mutations the families'
// parity tests must see (quick_gelu as gelu_tanh differs by up to ~2e-2, SiLU as GELU more).
type formSwap struct {
	backend.Backend
	from, to backend.GELUForm
}

func (m *formSwap) MatMulEpilogue(y, x backend.View, w, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	if ep.GELU && ep.Form == m.from {
		ep.Form = m.to
	}
	m.Backend.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
}

func TestParityQwen2VLSeesTheActivation(t *testing.T) {
	fx := openFixture(t, "qwen2vl_vision_tiny_f32")
	run := runTower(t, fx.dir, &formSwap{cpuBackend(), backend.GELUQuick, backend.GELUTanh}, tower.Settings{}, fx.input(t))
	if e := relErr(run.Merger, fx.f32(t, "pooler_output")); e < 1e-3 {
		t.Errorf("quick_gelu run as gelu_tanh: the merger is off by only %.2e", e)
	}
}

// Both new families with bf16 weights (stored as BF16, read as bf16 by the engine): against
// transformers in float32 on the same rounded weights, within 1e-5 (the engine computes in
// float32 whatever the weights' dtype), and against transformers' own bfloat16 runs (sdpa and
// eager on CUDA), within the 3% of bf16 arithmetic drift (TestParityTinyBF16Run's bound).
func TestParityFamiliesBF16(t *testing.T) {
	for _, name := range []string{"qwen2vl_vision_tiny_bf16", "qwen25vl_vision_tiny_bf16"} {
		fx := openFixture(t, name)
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, fx.input(t))
		outs := run.Probes.Outputs()
		for i, o := range outs {
			if e := relErr(o, fx.f32(t, fmt.Sprintf("blk%d", i))); e > 1e-5 {
				t.Errorf("%s block %d: relative error %.3e > 1e-5 against transformers float32", name, i, e)
			}
		}
		if e := relErr(run.Merger, fx.f32(t, "pooler_output")); e > 1e-5 {
			t.Errorf("%s merger: relative error %.3e > 1e-5 against transformers float32", name, e)
		}
		for _, impl := range []string{"sdpa", "eager"} {
			worst := relErr(run.Merger, fx.f32(t, "bfloat16_"+impl+"_pooler_output"))
			for i, o := range outs {
				worst = max(worst, relErr(o, fx.f32(t, fmt.Sprintf("bfloat16_%s_blk%d", impl, i))))
			}
			t.Logf("%s: worst relative error against bfloat16 %s %.2e", name, impl, worst)
			if worst > 0.03 {
				t.Errorf("%s: %.3e relative against transformers' bfloat16 %s run, more than the 3%% bf16 bound", name, worst, impl)
			}
		}
	}
}
