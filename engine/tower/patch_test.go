package tower_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// Activation patching against transformers: block 1's output at eight patches replaced by a
// second input's (a forward hook on the block, make_fixtures.py patch); every block output
// (block 1's patched), the merger and the deepstack mergers within 1e-5, on Qwen3-VL's tiny
// tower and Qwen2.5-VL's (rows in window order). Patching a run with itself changes no bit.
func TestActivationPatchParity(t *testing.T) {
	for _, name := range []string{"qwen3vl", "qwen25vl"} {
		fx, ref, block, rows, xb := patchFixture(t, name, "patch")
		in := fx.input(t)
		e := engineFor(t, fx.dir)
		src := runWith(t, e, &ckpt.Input{Pixels: xb, Grids: in.Grids}, nil)
		got := runWith(t, e, in, func(r *tower.Run) { must(t, r.PatchOutput(block, rows, src.Probes.Outputs()[block])) })
		for name2, g := range towerOutputs(got) {
			want, err := ref.ReadF32("patched_" + name2)
			must(t, err)
			if e := relErr(g, want); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", name, name2, e)
			}
		}
		plain := runWith(t, e, in, nil)
		self := runWith(t, e, in, func(r *tower.Run) { must(t, r.PatchOutput(block, rows, plain.Probes.Outputs()[block])) })
		if !bitEqual(self.Merger, plain.Merger) || bitEqual(got.Merger, plain.Merger) {
			t.Errorf("%s: patching a run with itself must change no bit, with another input some", name)
		}
	}
}

// One head's slice of attn patched against transformers: block 1's head 2, where proj reads it,
// at eight patches from a second input (forward pre-hooks on attn.proj, make_fixtures.py
// patchhead); every block output, the merger and deepstack within 1e-5, on Qwen3-VL's and
// Qwen2.5-VL's tiny towers (rows in window order). Patching with the run's own attn changes no
// bit; another head's columns (a mutation of the column range) fail parity.
func TestHeadPatchParity(t *testing.T) {
	for _, name := range []string{"qwen3vl", "qwen25vl"} {
		fx, ref, block, rows, xb := patchFixture(t, name, "patchhead")
		head, _ := strconv.Atoi(ref.Metadata["head"])
		in := fx.input(t)
		e := engineFor(t, fx.dir)
		var src, own []float32
		runWith(t, e, &ckpt.Input{Pixels: xb, Grids: in.Grids}, func(r *tower.Run) { r.CaptureAttn(block, func(a []float32) { src = a }) })
		got := runWith(t, e, in, func(r *tower.Run) { must(t, r.PatchHead(block, head, rows, src)) })
		for name2, g := range towerOutputs(got) {
			want, err := ref.ReadF32("patched_" + name2)
			must(t, err)
			if e := relErr(g, want); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", name, name2, e)
			}
		}
		plain := runWith(t, e, in, func(r *tower.Run) { r.CaptureAttn(block, func(a []float32) { own = a }) })
		self := runWith(t, e, in, func(r *tower.Run) { must(t, r.PatchHead(block, head, rows, own)) })
		if !bitEqual(self.Merger, plain.Merger) || bitEqual(got.Merger, plain.Merger) {
			t.Errorf("%s: patching a head with the run's own attn must change no bit, with another input's some", name)
		}
		other := runWith(t, e, in, func(r *tower.Run) { must(t, r.PatchHead(block, (head+1)%4, rows, src)) })
		if relErr(other.Merger, got.Merger) < 1e-4 {
			t.Errorf("%s: patching head %d gave head %d's merger", name, (head+1)%4, head)
		}
	}
}

// patchFixture opens family name's tiny tower and its patch fixture (kind: patch or
// patchhead): the block, the patched rows and the second input XB.
func patchFixture(t *testing.T, name, kind string) (fx *fixture, ref *safetensors.File, block int, rows []int, xb []float32) {
	t.Helper()
	fx = openFixture(t, name+"_vision_tiny_f32")
	ref, err := safetensors.Open(filepath.Join("..", "testdata", name+"_vision_tiny_"+kind+".safetensors"))
	must(t, err)
	block, _ = strconv.Atoi(ref.Metadata["block"])
	for _, s := range strings.Split(ref.Metadata["rows"], ",") {
		r, _ := strconv.Atoi(s)
		rows = append(rows, r)
	}
	xb, err = ref.ReadF32("XB")
	must(t, err)
	return fx, ref, block, rows, xb
}

func engineFor(t *testing.T, dir string) *tower.Engine {
	t.Helper()
	ck, err := ckpt.OpenCheckpoint(dir)
	must(t, err)
	e, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{Keep: tower.Keep{Outputs: true}})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// runWith runs in on e to the end, calling before (if not nil) on the fresh run.
func runWith(t *testing.T, e *tower.Engine, in *ckpt.Input, before func(*tower.Run)) *tower.Run {
	t.Helper()
	r, err := e.Start(in)
	must(t, err)
	t.Cleanup(r.Close)
	if before != nil {
		before(r)
	}
	must(t, r.RunAll(context.Background()))
	return r
}

// PatchOutput refuses a block already run, a source of another shape, a row off the page.
func TestPatchOutputRefuses(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	e := engineFor(t, fx.dir)
	r, err := e.Start(fx.input(t))
	must(t, err)
	defer r.Close()
	_, err = r.Step(context.Background())
	must(t, err)
	S, D := r.Layout.Rows(), r.Config().Hidden
	for what, err := range map[string]error{
		"a block run":  r.PatchOutput(0, []int{1}, make([]float32, S*D)),
		"a short one":  r.PatchOutput(2, []int{1}, make([]float32, S*D-1)),
		"a row beyond": r.PatchOutput(2, []int{S}, make([]float32, S*D)),
		"a block past": r.PatchOutput(4, []int{1}, make([]float32, S*D)),
	} {
		if err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}
