package tower_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// Heads scaled where they enter proj against transformers with the same factors applied by a
// forward pre-hook on attn.proj (make_fixtures.py scalehead): every block output, the merger
// and deepstack within 1e-5, on Qwen3-VL's tiny tower and Qwen2.5-VL's (windowed blocks, rows
// in window order). A negative factor and a block with two heads scaled are in the specs.
func TestScaleHeadParity(t *testing.T) {
	for _, c := range []struct{ tower, ref, spec string }{
		{"qwen3vl_vision_tiny_f32", "qwen3vl_vision_tiny_scalehead", "1:2=0.5,2:0=1.5,2:3=-1"},
		{"qwen25vl_vision_tiny_f32", "qwen25vl_vision_tiny_scalehead", "0:1=0.5,1:0=2,2:3=0.25"},
	} {
		fx := openFixture(t, c.tower)
		ref, err := safetensors.Open(filepath.Join("..", "testdata", c.ref+".safetensors"))
		must(t, err)
		if got := ref.Metadata["scale"]; got != c.spec {
			t.Fatalf("%s scales %q, the test says %q", c.ref, got, c.spec)
		}
		sh, err := intervene.ParseScaleHeads(c.spec)
		must(t, err)
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{ScaleHead: sh}}, fx.input(t))
		outs := towerOutputs(run)
		if len(outs) < 2 {
			t.Fatalf("%s: %d outputs compared", c.tower, len(outs))
		}
		for name, g := range outs {
			want, err := ref.ReadF32("scaled_" + name)
			must(t, err)
			if e := relErr(g, want); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", c.tower, name, e)
			}
		}
		// the scaling is not a no-op: the merger moved away from the plain run's
		if e := relErr(run.Merger, fx.f32(t, "pooler_output")); e < 1e-3 {
			t.Errorf("%s: the merger moved by only %.2e", c.tower, e)
		}
	}
}

// A factor of 1 changes no bit; a scaling changes no bit before its first block and every
// block from it on.
func TestScaleHeadTouchesOnlyItsBlocks(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	plain := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, fx.input(t))
	one, err := intervene.ParseScaleHeads("1:0=1,2:3=1")
	must(t, err)
	same := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{ScaleHead: one}}, fx.input(t))
	if !bitEqual(plain.Merger, same.Merger) {
		t.Error("a factor of 1 changed the merger's bits")
	}
	sh, err := intervene.ParseScaleHeads("2:1=0.5")
	must(t, err)
	late := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{ScaleHead: sh}}, fx.input(t))
	po, lo := plain.Probes.Outputs(), late.Probes.Outputs()
	for b := range po {
		if same := bitEqual(po[b], lo[b]); same != (b < 2) {
			t.Errorf("block %d: bit-identical to the plain run %v, want %v", b, same, b < 2)
		}
	}
}

// The setting's syntax: canonical order and factors, errors naming the item; blocks and heads
// outside the tower refused when the run starts; named by Describe.
func TestParseScaleHeads(t *testing.T) {
	sh, err := intervene.ParseScaleHeads(" 2:0=1.50 + 1:2=.5")
	if err != nil || sh != "1:2=0.5,2:0=1.5" || sh.Name() != "scale heads 1:2=0.5,2:0=1.5" || sh.From() != 1 {
		t.Errorf("ParseScaleHeads = %q (from %d), %v", sh, sh.From(), err)
	}
	for _, bad := range []string{"1:2", "1=0.5", "a:2=1", "1:2=x", "1:2=inf", "1:2=NaN", "-1:2=1", "1:2=1,1:2=3", ","} {
		if _, err := intervene.ParseScaleHeads(bad); err == nil {
			t.Errorf("ParseScaleHeads(%q) accepted", bad)
		}
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	for spec, want := range map[string]string{"4:0=2": "blocks 0..3", "1:4=2": "heads 0..3"} {
		sh, err := intervene.ParseScaleHeads(spec)
		must(t, err)
		if err := startErr(t, fx, tower.Settings{Set: intervene.Set{ScaleHead: sh}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("scale %s: %v, want an error naming %s", spec, err, want)
		}
	}
	if d := (tower.Settings{Set: intervene.Set{ScaleHead: sh}}).Describe(); !strings.Contains(d, "scale heads 1:2=0.5,2:0=1.5") {
		t.Errorf("Describe %q does not name the scaling", d)
	}
}
