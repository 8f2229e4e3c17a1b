package record_test

// dump_test.go: what a dump (run --dump, the window's export) writes: the taps asked for, and
// every tensor in the processor's order.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/record"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// The dump writes blocks.{i}.{tap} for the taps asked, at their widths, equal to the kept
// values; the contract's tensors stay as they were; a tap not kept is an error.
func TestDumpWritesTaps(t *testing.T) {
	run := oneGridRun(t, tower.TapSetOf(tower.TapLN1, tower.TapFFNAct, tower.TapQ))
	cfg, S := run.Config(), run.Layout.Rows()
	path := filepath.Join(t.TempDir(), "d.safetensors")
	must(t, record.WriteDump(run, path, -1, tower.TapSetOf(tower.TapLN1, tower.TapFFNAct, tower.TapOut)))
	f, err := safetensors.Open(path)
	must(t, err)
	for i := range cfg.Depth {
		for name, width := range map[string]int{"ln1": cfg.Hidden, "ffn_act": cfg.Intermediate, "out": cfg.Hidden} {
			key := fmt.Sprintf("blocks.%d.%s", i, name)
			info, ok := f.Tensors[key]
			if !ok || !slices.Equal(info.Shape, []int{S, width}) {
				t.Fatalf("%s: %v (present %v), want [%d %d]", key, info.Shape, ok, S, width)
			}
			got, err := f.ReadF32(key)
			must(t, err)
			want, err := run.Probes.Tap(name, i)
			must(t, err)
			if !bitEqual(got, want) {
				t.Errorf("%s differs from the kept tap", key)
			}
		}
		if _, ok := f.Tensors[fmt.Sprintf("blocks.%d.q", i)]; ok {
			t.Errorf("block %d: q was kept but not asked for, and dumped", i)
		}
	}
	if n := len(f.Tensors); n != 3+3*cfg.Depth+1+len(cfg.Deepstack) {
		t.Errorf("%d tensors in the dump", n)
	}
	err = record.WriteDump(run, filepath.Join(t.TempDir(), "x.safetensors"), -1, tower.TapSetOf(tower.TapAttn))
	if err == nil || !strings.Contains(err.Error(), "tap attn of block 0 is not kept") {
		t.Errorf("dumping a tap not kept: %v", err)
	}
}

// oneGridRun runs the tiny tower on its first grid only (a dump holds one image).
func oneGridRun(t *testing.T, taps tower.TapSet) *tower.Run {
	t.Helper()
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	in := fx.input(t)
	g := in.Grids[0]
	rows := g.Patches()
	one := &ckpt.Input{Pixels: in.Pixels[:rows*len(in.Pixels)/176], Grids: in.Grids[:1]}
	return runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: tower.Keep{Taps: taps}}, one)
}

// A Qwen2.5-VL dump is in the processor's order (pixel_values' rows), whatever order the
// blocks held the rows in: the embedding row p is pixel_values row p times the patch weight,
// and in a windowed block the attention row of query p is non-zero exactly on the patches of
// p's window (windows of 2x2 merge units, i.e. 4x4 patches, counted from the top left) —
// both checked from the pixel rows and the patch positions alone, not from the layout.
func TestDumpQwen25VLInProcessorOrder(t *testing.T) {
	fx := openFixture(t, "qwen25vl_vision_tiny_f32")
	full := fx.input(t)
	g := full.Grids[2] // the 10x12 image: 3x3 windows, the last row and column of them smaller
	dim := len(full.Pixels) / 176
	in := &ckpt.Input{Pixels: full.Pixels[(176-g.Patches())*dim:], Grids: []geom.Grid{g}}
	run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: tower.Keep{Attention: true}}, in)
	path := filepath.Join(t.TempDir(), "dump.safetensors")
	const query = 37
	must(t, record.WriteDump(run, path, query, 0))
	f, err := safetensors.Open(path)
	must(t, err)
	read := func(name string) []float32 {
		v, err := f.ReadF32(name)
		must(t, err)
		return v
	}
	embed, pix := read("embed"), read("pixel_values")
	w := fx.f32(t, "model.visual.patch_embed.proj.weight")
	D, S := run.Config().Hidden, g.Patches()
	for _, p := range []int{0, 5, query, 100, S - 1} {
		for d := range D {
			var want float64
			for k := range dim {
				want += float64(pix[p*dim+k]) * float64(w[d*dim+k])
			}
			if diff := float64(embed[p*D+d]) - want; diff > 1e-4 || diff < -1e-4 {
				t.Fatalf("embed row %d, column %d: %g, pixel_values row %d times the weight gives %g", p, d, embed[p*D+d], p, want)
			}
		}
	}
	rows := read("blocks.0.attn_row") // block 0 is windowed
	q := geom.MergeOrderPos(query, g.W, 2)
	for h := range run.Config().Heads {
		for j := range S {
			k := geom.MergeOrderPos(j, g.W, 2)
			same := k.Row/4 == q.Row/4 && k.Col/4 == q.Col/4
			if a := rows[h*S+j]; (a != 0) != same {
				t.Fatalf("head %d: query %d at %v attends %g to key %d at %v (same window: %v)", h, query, q, a, j, k, same)
			}
		}
	}
}
