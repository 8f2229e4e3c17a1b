package tower_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// Head ablation against transformers with the same heads zeroed, or replaced by their page
// mean, by a forward pre-hook on attn.proj (make_fixtures.py ablate): every block output, the
// merger and deepstack within 1e-5, on Qwen3-VL's tiny tower (three grids: the mean is the
// page's, not a frame's) and Qwen2.5-VL's (windowed blocks, rows in window order).
func TestAblationParity(t *testing.T) {
	for _, c := range []struct{ tower, ablate, heads string }{
		{"qwen3vl_vision_tiny_f32", "qwen3vl_vision_tiny_ablate", "1:2,2:*,3:0"},
		{"qwen25vl_vision_tiny_f32", "qwen25vl_vision_tiny_ablate", "0:1,1:*,2:3"},
	} {
		fx := openFixture(t, c.tower)
		ref, err := safetensors.Open(filepath.Join("..", "testdata", c.ablate+".safetensors"))
		must(t, err)
		if got := ref.Metadata["heads"]; got != c.heads {
			t.Fatalf("%s ablates %q, the test says %q", c.ablate, got, c.heads)
		}
		for _, mode := range []string{intervene.AblateZero, intervene.AblateMean} {
			a, err := intervene.ParseAblation(c.heads, mode)
			must(t, err)
			run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{Ablate: a}}, fx.input(t))
			for name, g := range towerOutputs(run) {
				want, err := ref.ReadF32(mode + "_" + name)
				must(t, err)
				e := relErr(g, want)
				if e > 1e-5 {
					t.Errorf("%s %s %s: relative error %.3e > 1e-5 against transformers", c.tower, mode, name, e)
				}
			}
			// the ablation is not a no-op: the outputs moved away from the unablated run's
			if e := relErr(run.Merger, fx.f32(t, "pooler_output")); e < 1e-3 {
				t.Errorf("%s %s: the merger moved by only %.2e", c.tower, mode, e)
			}
		}
	}
}

// An empty ablation changes no bit; an ablation changes no bit before its first block.
func TestAblationTouchesOnlyItsBlocks(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	plain := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, fx.input(t))
	none := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{Ablate: intervene.Ablation{Mode: intervene.AblateMean}}}, fx.input(t))
	if !bitEqual(plain.Merger, none.Merger) {
		t.Error("an empty ablation changed the merger's bits")
	}
	a, err := intervene.ParseAblation("2:1", "mean")
	must(t, err)
	late := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{Ablate: a}}, fx.input(t))
	po, lo := plain.Probes.Outputs(), late.Probes.Outputs()
	for b := range po {
		if same := bitEqual(po[b], lo[b]); same != (b < 2) {
			t.Errorf("block %d: bit-identical to the plain run %v, want %v", b, same, b < 2)
		}
	}
}

// The flag syntax: canonical order, * for a block, errors naming the pair; heads outside the
// tower refused when the run starts, naming the block or head.
func TestParseAblation(t *testing.T) {
	a, err := intervene.ParseAblation(" 7:* , 3:5,3:1,3:5", "")
	if err != nil || a.Heads != "3:1,3:5,7:*" || a.String() != "ablate 3:1,3:5,7:* (zero)" {
		t.Errorf("ParseAblation = %+v, %v", a, err)
	}
	for _, bad := range [][2]string{{"3", ""}, {"3:x", ""}, {"-1:2", ""}, {"3:5", "half"}, {"3:-2", ""}} {
		if _, err := intervene.ParseAblation(bad[0], bad[1]); err == nil {
			t.Errorf("ParseAblation(%q, %q) accepted", bad[0], bad[1])
		}
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	for spec, want := range map[string]string{"4:0": "blocks 0..3", "1:4": "heads 0..3"} {
		a, err := intervene.ParseAblation(spec, "")
		must(t, err)
		ck, err := ckpt.OpenCheckpoint(fx.dir)
		must(t, err)
		e, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{Set: intervene.Set{Ablate: a}})
		if err == nil {
			_, err = e.Start(fx.input(t))
			e.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ablate %s: %v, want an error naming %s", spec, err, want)
		}
	}
	if d := (tower.Settings{Backend: "cpu", Set: intervene.Set{Ablate: a}}).Describe(); !strings.Contains(d, "ablate 3:1,3:5,7:* (zero)") {
		t.Errorf("Describe %q does not name the ablation", d)
	}
}
