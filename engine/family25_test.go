package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/safetensors"
)

// Qwen2.5-VL's tiny tower (4 blocks of 64, gated SiLU MLP of 120, RMS norms, windows of 2x2
// merge units, full attention in blocks 1 and 3) against transformers 5.17 in float32: the
// window order (window_index, cu_window_seqlens), every block output in the blocks' order,
// the merger in the processor's order, the attention rows of six queries in every block over
// the segment transformers used; mapped and pread bit-identical.
func TestParityQwen25VL(t *testing.T) {
	checkFamilyParity(t, "qwen25vl_vision_tiny_f32", func(fx *fixture, run *engine.Run) { checkWindowOrder(t, fx, run.Layout) })
}

// checkWindowOrder compares the layout's row order and windows with transformers'
// window_index (the processor's merge unit of each unit in order) and cu_window_seqlens.
func checkWindowOrder(t *testing.T, fx *fixture, lay *geom.Layout) {
	t.Helper()
	wi, err := fx.f.ReadI64("window_index")
	must(t, err)
	m2 := lay.Merge * lay.Merge
	for u, p := range wi {
		if got := lay.ProcessorRow(u*m2) / m2; got != int(p) {
			t.Fatalf("unit %d holds the processor's unit %d, transformers' window_index says %d", u, got, p)
		}
	}
	cu, err := fx.f.ReadI64("cu_window_seqlens")
	must(t, err)
	var want []backend.Segment
	for i := 1; i < len(cu); i++ {
		want = append(want, backend.Segment{Start: int(cu[i-1]), End: int(cu[i])})
	}
	got := lay.SegmentsOf(0) // block 0 is windowed
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("windows %v, transformers' %v", got, want)
	}
	if fmt.Sprint(lay.SegmentsOf(1)) != fmt.Sprint(lay.Segments) {
		t.Fatalf("block 1 (full attention) attends within %v, want the frames %v", lay.SegmentsOf(1), lay.Segments)
	}
}

// renamedCopy writes fx's checkpoint into a new directory with the tensor names map gives
// (the vision tensors only, in float32) and the same config.json.
func renamedCopy(t *testing.T, fx *fixture, rename func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(fx.dir, "config.json"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	var ts []safetensors.Tensor
	for _, info := range fx.f.Sorted() {
		if !strings.HasPrefix(info.Name, "model.visual.") {
			continue
		}
		ts = append(ts, safetensors.F32Tensor(rename(info.Name), info.Shape, fx.f32(t, info.Name)))
	}
	must(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil))
	return dir
}

// The Qwen2.5-VL parity sees each way the family could be wrong and stay fluent: the gate and
// up projections swapped, SiLU run as a GELU, the windowed blocks run with full attention,
// the merger left in the window order.
func TestParityQwen25VLSeesTheMutations(t *testing.T) {
	fx := openFixture(t, "qwen25vl_vision_tiny_f32")
	want := fx.f32(t, "pooler_output")
	off := func(what string, got []float32) {
		t.Helper()
		e := relErr(got, want)
		t.Logf("%s: the merger is off by %.2e", what, e)
		if e < 1e-3 {
			t.Errorf("%s: the merger is off by only %.2e", what, e)
		}
	}
	swapped := renamedCopy(t, fx, func(n string) string {
		switch {
		case strings.Contains(n, "mlp.gate_proj."):
			return strings.Replace(n, "gate_proj", "up_proj", 1)
		case strings.Contains(n, "mlp.up_proj."):
			return strings.Replace(n, "up_proj", "gate_proj", 1)
		}
		return n
	})
	off("gate and up swapped", runTower(t, swapped, cpuBackend(), engine.Settings{}, fx.input(t)).Merger)
	off("SiLU as GELU", runTower(t, fx.dir, &formSwap{cpuBackend(), backend.GELUSiLU, backend.GELUErf}, engine.Settings{}, fx.input(t)).Merger)
	run := runTower(t, fx.dir, cpuBackend(), engine.Settings{}, fx.input(t))
	off("the merger in window order", run.Layout.ToLayoutOrderMerged(run.Merger, run.Config().OutHidden))
	in := fx.input(t)
	frames, err := geom.NewLayout(2, in.Grids)
	must(t, err)
	off("windowed blocks on whole frames", runTower(t, fx.dir, &frameAttention{Backend: cpuBackend(), frames: frames.Segments}, engine.Settings{}, in).Merger)
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
	in := &engine.Input{Pixels: full.Pixels[(176-g.Patches())*dim:], Grids: []geom.Grid{g}}
	run := runTower(t, fx.dir, cpuBackend(), engine.Settings{Keep: engine.Keep{Attention: true}}, in)
	path := filepath.Join(t.TempDir(), "dump.safetensors")
	const query = 37
	must(t, run.WriteDump(path, query, 0))
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
