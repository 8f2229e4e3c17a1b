package tower_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// Qwen2.5-VL's tiny tower (4 blocks of 64, gated SiLU MLP of 120, RMS norms, windows of 2x2
// merge units, full attention in blocks 1 and 3) against transformers 5.17 in float32: the
// window order (window_index, cu_window_seqlens), every block output in the blocks' order,
// the merger in the processor's order, the attention rows of six queries in every block over
// the segment transformers used; mapped and pread bit-identical.
func TestParityQwen25VL(t *testing.T) {
	checkFamilyParity(t, "qwen25vl_vision_tiny_f32", func(fx *fixture, run *tower.Run) { checkWindowOrder(t, fx, run.Layout) })
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
	off("gate and up swapped", runTower(t, swapped, cpuBackend(), tower.Settings{}, fx.input(t)).Merger)
	off("SiLU as GELU", runTower(t, fx.dir, &formSwap{cpuBackend(), backend.GELUSiLU, backend.GELUErf}, tower.Settings{}, fx.input(t)).Merger)
	run := runTower(t, fx.dir, cpuBackend(), tower.Settings{}, fx.input(t))
	off("the merger in window order", run.Layout.ToLayoutOrderMerged(run.Merger, run.Config().OutHidden))
	in := fx.input(t)
	frames, err := geom.NewLayout(2, in.Grids)
	must(t, err)
	off("windowed blocks on whole frames", runTower(t, fx.dir, &frameAttention{Backend: cpuBackend(), frames: frames.Segments}, tower.Settings{}, in).Merger)
}
