package tower_test

import (
	"fmt"
	"testing"

	"github.com/turbospark/inspector/engine/tower"
)

// towerOutputs names a run's tensors like the f32 fixture does.
func towerOutputs(run *tower.Run) map[string][]float32 {
	out := map[string][]float32{"pooler_output": run.Merger}
	for i, o := range run.Probes.Outputs() {
		out[fmt.Sprintf("blk%d", i)] = o
	}
	for k, d := range run.Deepstack {
		out[fmt.Sprintf("deepstack%d", k)] = d
	}
	return out
}

// checkParity compares every output with the fixture and returns the worst relative error.
func checkParity(t *testing.T, fx *fixture, run *tower.Run, refName func(string) string) (worst float64, worstName string) {
	t.Helper()
	got := towerOutputs(run)
	if len(got) != 7 {
		t.Fatalf("run produced %d outputs, want 4 blocks + merger + 2 deepstack", len(got))
	}
	for name, g := range got {
		e := relErr(g, fx.f32(t, refName(name)))
		if e > worst {
			worst, worstName = e, name
		}
	}
	return worst, worstName
}

// The tiny tower (4 blocks, deepstack [1,2], three grids: an image, a 2-frame video and an
// image larger than the 8x8 position table) against transformers float32.
// tower_tiny_f32_regen is the same kind of tower made by scripts/make_fixtures.py tower, with
// biases and norms perturbed away from HF's init so every bias path counts.
func TestParityTinyF32(t *testing.T) {
	for _, name := range []string{"qwen3vl_vision_tiny_f32", "tower_tiny_f32_regen"} {
		fx := openFixture(t, name)
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, fx.input(t))
		for out, g := range towerOutputs(run) {
			e := relErr(g, fx.f32(t, out))
			t.Logf("%s %-14s rel %.2e", name, out, e)
			if e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", name, out, e)
			}
		}
		if e := relErr(run.Hidden(), fx.f32(t, "last_hidden_state")); e > 1e-5 {
			t.Errorf("%s last_hidden_state: relative error %.3e", name, e)
		}
	}
}

// bf16-rounded weights run by transformers in bfloat16 (sdpa and eager): a float32 engine
// differs by bf16 arithmetic drift, about 1% (fixtures README); 3% bounds it with margin.
func TestParityTinyBF16Run(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_bf16run")
	run := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, fx.input(t))
	for _, impl := range []string{"sdpa", "eager"} {
		ref := func(name string) string {
			switch name {
			case "pooler_output":
				return "bfloat16_" + impl + "_o.pooler_output"
			case "deepstack0", "deepstack1":
				return fmt.Sprintf("bfloat16_%s_o.deepstack_features.%s", impl, name[len(name)-1:])
			}
			return "bfloat16_" + impl + "_" + name
		}
		worst, at := checkParity(t, fx, run, ref)
		t.Logf("bf16 %s: worst relative error %.2e at %s", impl, worst, at)
		if worst > 0.03 {
			t.Errorf("bf16 %s: %s differs by %.3e relative, more than the 3%% bf16 bound", impl, at, worst)
		}
	}
}
