package tower_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// Input occlusion against transformers with the same pixel_values rows replaced by the page's
// per-channel mean (make_fixtures.py mask): every block, the merger and deepstack within
// 1e-5, on Qwen3-VL's tiny tower and Qwen2.5-VL's (whose rows the blocks see in window order).
func TestMaskParity(t *testing.T) {
	for _, c := range []struct{ tower, ref string }{
		{"qwen3vl_vision_tiny_f32", "qwen3vl_vision_tiny_mask"},
		{"qwen25vl_vision_tiny_f32", "qwen25vl_vision_tiny_mask"},
	} {
		fx := openFixture(t, c.tower)
		ref, err := safetensors.Open(filepath.Join("..", "testdata", c.ref+".safetensors"))
		must(t, err)
		m, err := intervene.ParseMask("rows:" + ref.Metadata["rows"])
		must(t, err)
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{Mask: m}}, fx.input(t))
		for name, g := range towerOutputs(run) {
			want, err := ref.ReadF32("masked_" + name)
			must(t, err)
			if e := relErr(g, want); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", c.tower, name, e)
			}
		}
		if e := relErr(run.Merger, fx.f32(t, "pooler_output")); e < 1e-3 {
			t.Errorf("%s: the mask moved the merger by only %.2e", c.tower, e)
		}
	}
}

// A rectangle of patches is the same occlusion as its rows, on both row orders; bad masks are
// refused naming what is wrong.
func TestMaskRect(t *testing.T) {
	for _, name := range []string{"qwen3vl_vision_tiny_f32", "qwen25vl_vision_tiny_f32"} {
		fx := openFixture(t, name)
		in := fx.input(t)
		// 4 x 6 patches: columns 4..5 of rows 0..1 are the merge unit of rows 8..11, the third in
		// the processor's order and the fifth in Qwen2.5-VL's window order
		g := in.Grids[0]
		first := &ckpt.Input{Pixels: in.Pixels[:g.Patches()*len(in.Pixels)/176], Grids: []geom.Grid{g}}
		rect, err := intervene.ParseMask("4,0,6,2")
		must(t, err)
		rows, err := intervene.ParseMask("rows:11,10,9,8")
		must(t, err)
		a := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{Mask: rect}}, first)
		b := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{Mask: rows}}, first)
		plain := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, first)
		if !bitEqual(a.Merger, b.Merger) || bitEqual(a.Merger, plain.Merger) {
			t.Errorf("%s: the rectangle 4,0,6,2 is not rows 8-11's occlusion", name)
		}
	}
	for spec, want := range map[string]string{"1,2,1,3": "x0,y0,x1,y1", "rows:": "rows:R", "1,2,3": "x0,y0,x1,y1", "rows:a": "rows:R"} {
		if _, err := intervene.ParseMask(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMask(%q): %v", spec, err)
		}
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	for spec, want := range map[string]string{"0,0,7,1": "6 x 4 patches", "rows:176": "has 176 patches"} {
		m, err := intervene.ParseMask(spec)
		must(t, err)
		if err := startErr(t, fx, tower.Settings{Set: intervene.Set{Mask: m}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("mask %s: %v, want an error naming %s", spec, err, want)
		}
	}
}

// startErr is what starting fx's input on its tower under set says (the engine closed after).
func startErr(t *testing.T, fx *fixture, set tower.Settings) error {
	t.Helper()
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	e, err := tower.NewEngine(ck, cpuBackend(), set)
	must(t, err)
	defer e.Close()
	_, err = e.Start(fx.input(t))
	return err
}
