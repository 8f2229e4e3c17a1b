package tower_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// keyMaskFixture is the key mask of a make_fixtures.py keymask file: its rows from its block.
func keyMaskFixture(t *testing.T, ref *safetensors.File) intervene.KeyMask {
	t.Helper()
	km, err := intervene.ParseKeyMask("rows:" + ref.Metadata["rows"] + "@" + ref.Metadata["from"])
	must(t, err)
	return km
}

// Masking patches as keys against transformers, whose eager attention gets an additive -inf
// mask on their columns from the block on (make_fixtures.py keymask): every block output, the
// merger and deepstack within 1e-5, on Qwen3-VL's tiny tower (a video's two frames among the
// segments) and Qwen2.5-VL's (windowed blocks, rows in window order). Blocks before the mask's
// first change no bit.
func TestKeyMaskParity(t *testing.T) {
	for _, c := range []struct{ tower, ref string }{
		{"qwen3vl_vision_tiny_f32", "qwen3vl_vision_tiny_keymask"},
		{"qwen25vl_vision_tiny_f32", "qwen25vl_vision_tiny_keymask"},
	} {
		fx := openFixture(t, c.tower)
		ref, err := safetensors.Open(filepath.Join("..", "testdata", c.ref+".safetensors"))
		must(t, err)
		km := keyMaskFixture(t, ref)
		keep := tower.Keep{Outputs: true}
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: keep, Set: intervene.Set{KeyMask: km}}, fx.input(t))
		for name, g := range towerOutputs(run) {
			want, err := ref.ReadF32("masked_" + name)
			must(t, err)
			if e := relErr(g, want); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", c.tower, name, e)
			}
		}
		plain := runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: keep}, fx.input(t))
		for b := range km.Block {
			if !bitEqual(run.Probes.Outputs()[b], plain.Probes.Outputs()[b]) {
				t.Errorf("%s: block %d, before the mask's block %d, moved", c.tower, b, km.Block)
			}
		}
		if e := relErr(run.Probes.Outputs()[km.Block], plain.Probes.Outputs()[km.Block]); e < 1e-4 {
			t.Errorf("%s: the mask moved block %d by only %.2e", c.tower, km.Block, e)
		}
	}
}

// The attention maps honour the mask: from its block on, every head's row of a query gives the
// masked patches exactly 0 and still sums to 1 over its segment; before it, they keep their
// share. The mean row, the rollout and the head statistics agree (no NaN from a masked key).
func TestKeyMaskProbes(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	km, err := intervene.ParseKeyMask("rows:56,57,58,59,60,61,62,63,64,65,66,67@2")
	must(t, err)
	keep := tower.Keep{Outputs: true, Attention: true}
	run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: keep, Set: intervene.Set{KeyMask: km}}, fx.input(t))
	lay := run.Layout
	const query = 100 // in the third image, rows 56-175
	ctx := context.Background()
	for b := range 4 {
		rows, mean, err := run.Probes.QueryRows(ctx, b, lay.RowOfProcessor(query))
		must(t, err)
		for h, row := range append(rows, mean) {
			var masked, sum float64
			for r := 56; r < 68; r++ {
				masked += float64(row[lay.RowOfProcessor(r)])
			}
			for _, p := range row {
				sum += float64(p)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("block %d head %d: the row sums to %v", b, h, sum)
			}
			if b >= km.Block && masked != 0 || b < km.Block && masked == 0 {
				t.Errorf("block %d head %d: the masked patches hold %v of the row (mask from block %d)", b, h, masked, km.Block)
			}
		}
		dist, ent, err := run.Probes.HeadStats(ctx, b, 64)
		must(t, err)
		for h := range dist {
			if math.IsNaN(dist[h]) || math.IsNaN(ent[h]) {
				t.Errorf("block %d head %d: distance %v, entropy %v", b, h, dist[h], ent[h])
			}
		}
	}
	roll, err := run.Probes.Rollout(ctx, lay.RowOfProcessor(query), 3)
	must(t, err)
	for _, p := range roll {
		if math.IsNaN(float64(p)) {
			t.Fatalf("the rollout holds a NaN")
		}
	}
}

// A key mask names itself in the settings, refuses what it cannot run (a block past the
// tower, a segment left with no key) naming why, and round-trips through its spec.
func TestKeyMaskSettings(t *testing.T) {
	km, err := intervene.ParseKeyMask(" 2,1,4,3 @ 1")
	must(t, err)
	if km.Spec() != "2,1,4,3@1" || km.String() != "mask keys 2,1,4,3 from block 1" {
		t.Errorf("spec %q, name %q", km.Spec(), km.String())
	}
	if again, _ := intervene.ParseKeyMask(km.Spec()); again != km {
		t.Errorf("%q parses to %+v, not %+v", km.Spec(), again, km)
	}
	for spec, want := range map[string]string{"2,1,4,3": "PATCHES@BLOCK", "2,1,4,3@x": "PATCHES@BLOCK", "@2": "no patches", "1,1,1,2@0": "x0,y0,x1,y1"} {
		if _, err := intervene.ParseKeyMask(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeyMask(%q): %v, want it to say %s", spec, err, want)
		}
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	for spec, want := range map[string]string{
		"0,0,6,4@0":  "every patch of the image of rows 0-23", // the whole first image
		"0,0,2,2@4":  "blocks 0-3",
		"0,0,7,1@1":  "6 x 4 patches",
		"rows:24@9":  "blocks 0-3",
		"rows:176@0": "has 176 patches",
	} {
		km, err := intervene.ParseKeyMask(spec)
		must(t, err)
		if err := startErr(t, fx, tower.Settings{Set: intervene.Set{KeyMask: km}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("key mask %s: %v, want an error naming %s", spec, err, want)
		}
	}
	set := tower.DefaultSettings(cpu.Name)
	set.KeyMask = km
	if d := set.Describe(); !strings.Contains(d, "mask keys 2,1,4,3 from block 1") {
		t.Errorf("Describe: %q", d)
	}
}
