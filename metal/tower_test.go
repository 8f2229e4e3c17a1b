//go:build linux || darwin

package metal

// tower_test.go: the whole tiny tower through Backend, both residency arms, against the CPU
// engine and transformers — on Linux through the C++ kernel harness, on a Mac on the GPU
// (newTestBackend differs per platform).
//
// Invariant: each residency region is wrapped exactly once and no weight of the fixture
// is copied (its tensors are aligned). Mutation that would silently break it: keying
// wrappers on the Weight instead of its Region — results stay right, but every weight of
// a mapped checkpoint would become its own no-copy buffer (and the count here jumps).

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/internal/testfixture"
)

func TestTower(t *testing.T) {
	for _, c := range []struct {
		mode  engine.ResidencyMode
		wraps int // mapped: the shard's vision span; pread: embeddings + the merger region + 2 slots
	}{{engine.Mapped, 1}, {engine.Pread, 4}} {
		t.Run(string(c.mode), func(t *testing.T) {
			be := newTestBackend(t)
			checkTower(t, be, c.mode)
			if be.weights.wraps != c.wraps || be.weights.copied != 0 {
				t.Errorf("%s: %d regions wrapped and %d weights copied, want %d and 0", c.mode, be.weights.wraps, be.weights.copied, c.wraps)
			}
		})
	}
}

// Every named tap of every block, ffn_act included (its MLP half commits once per tile),
// on this backend against the CPU engine, at a tile that cuts the page unevenly.
func TestTowerTaps(t *testing.T) {
	fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", "qwen3vl_vision_tiny_f32.safetensors"))
	in := fx.Input(t)
	set := engine.Settings{Residency: engine.Pread, TileRows: 50, Keep: engine.Keep{Taps: engine.AllTaps}}
	want := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, cpu.New(0), set), in)
	got := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, newTestBackend(t), set), in)
	worst := map[string]float64{}
	for b := range got.Config().Depth {
		for _, name := range engine.TapNames() {
			g, err := got.Probes.Tap(name, b)
			if err != nil {
				t.Fatal(err)
			}
			w, err := want.Probes.Tap(name, b)
			if err != nil {
				t.Fatal(err)
			}
			e := numcheck.RelErr(g, w)
			worst[name] = max(worst[name], e)
			if !(e <= 1e-5) {
				t.Errorf("block %d tap %s: relative error %.3e against the CPU engine", b, name, e)
			}
		}
	}
	t.Logf("worst relative error per tap: %v", worst)
}

// Qwen2-VL's and Qwen2.5-VL's tiny towers through Backend (quick_gelu; RMS norms, the gated
// SiLU MLP, window attention in the window order), both residency arms: every block output and
// the merger against the CPU engine and transformers, within 1e-5.
func TestFamilyTowers(t *testing.T) {
	for _, name := range []string{"qwen2vl_vision_tiny_f32", "qwen25vl_vision_tiny_f32"} {
		for _, mode := range []engine.ResidencyMode{engine.Mapped, engine.Pread} {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", name+".safetensors"))
				in := fx.Input(t)
				c := cpu.New(0)
				t.Cleanup(func() { c.Close() })
				want := runTower(t, fx.Dir, c, mode, in)
				got := runTower(t, fx.Dir, newTestBackend(t), mode, in)
				check := func(what string, g, w []float32, ref string) {
					t.Helper()
					r, err := fx.File.ReadF32(ref)
					if err != nil {
						t.Fatal(err)
					}
					eCPU, eHF := numcheck.RelErr(g, w), numcheck.RelErr(g, r)
					if !(eCPU <= 1e-5) || !(eHF <= 1e-5) {
						t.Errorf("%s: relative error %.3e vs the CPU engine, %.3e vs transformers; tolerance 1e-5", what, eCPU, eHF)
					}
				}
				wo, gotOut := want.Probes.Outputs(), got.Probes.Outputs()
				for i := range wo {
					check(fmt.Sprintf("block %d", i), gotOut[i], wo[i], fmt.Sprintf("blk%d", i))
				}
				check("merger", got.Merger, want.Merger, "pooler_output")
			})
		}
	}
}

// Head ablation (zero and page mean) through Backend's fill_columns, against the CPU engine:
// the tiny Qwen3-VL tower with heads of three blocks ablated.
func TestAblationTower(t *testing.T) {
	fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", "qwen3vl_vision_tiny_f32.safetensors"))
	in := fx.Input(t)
	for _, mode := range []string{engine.AblateZero, engine.AblateMean} {
		a, err := engine.ParseAblation("1:2,2:*,3:0", mode)
		if err != nil {
			t.Fatal(err)
		}
		set := engine.Settings{Keep: engine.Keep{Outputs: true}, Set: intervene.Set{Ablate: a}}
		c := cpu.New(0)
		want := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, c, set), in)
		got := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, newTestBackend(t), set), in)
		if e := numcheck.RelErr(got.Merger, want.Merger); !(e <= 1e-5) {
			t.Errorf("%s: the merger is off the CPU engine's by %.3e", mode, e)
		}
		for b, o := range got.Probes.Outputs() {
			if e := numcheck.RelErr(o, want.Probes.Outputs()[b]); !(e <= 1e-5) {
				t.Errorf("%s block %d: off the CPU engine's by %.3e", mode, b, e)
			}
		}
	}
}

// Heads scaled where they enter proj (intervene.ScaleHeads: attn brought down mid-pass,
// scaled and sent back, which the backend must order after the attention that wrote it)
// through Backend, against the CPU engine within 1e-5, every block and the merger.
func TestScaleHeadTower(t *testing.T) {
	fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", "qwen3vl_vision_tiny_f32.safetensors"))
	sh, err := engine.ParseScaleHeads("1:2=0.5,2:0=1.5,2:3=-1")
	if err != nil {
		t.Fatal(err)
	}
	set := engine.Settings{Keep: engine.Keep{Outputs: true}, Set: intervene.Set{ScaleHead: sh}}
	in := fx.Input(t)
	want := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, cpu.New(0), set), in)
	got := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, newTestBackend(t), set), in)
	if e := numcheck.RelErr(got.Merger, want.Merger); !(e <= 1e-5) {
		t.Errorf("the merger is off the CPU engine's by %.3e", e)
	}
	for b, o := range got.Probes.Outputs() {
		if e := numcheck.RelErr(o, want.Probes.Outputs()[b]); !(e <= 1e-5) {
			t.Errorf("block %d: off the CPU engine's by %.3e", b, e)
		}
	}
	if e := numcheck.RelErr(got.Merger, fx.F32(t, "pooler_output")); e < 1e-3 {
		t.Errorf("the merger moved by only %.2e", e)
	}
}

// One head's slice of attn patched (engine.Run.PatchHead: attn brought down mid-pass, patched
// and sent back, which the backend must order after the attention that wrote it) through
// Backend, against transformers' patched run (make_fixtures.py patchhead) within 1e-5.
func TestHeadPatchTower(t *testing.T) {
	fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", "qwen3vl_vision_tiny_f32.safetensors"))
	ref, err := safetensors.Open(filepath.Join("..", "engine", "testdata", "qwen3vl_vision_tiny_patchhead.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	in := fx.Input(t)
	xb, err := ref.ReadF32("XB")
	if err != nil {
		t.Fatal(err)
	}
	var rows []int
	for _, s := range strings.Split(ref.Metadata["rows"], ",") {
		r, _ := strconv.Atoi(s)
		rows = append(rows, r)
	}
	block, _ := strconv.Atoi(ref.Metadata["block"])
	head, _ := strconv.Atoi(ref.Metadata["head"])
	e := testfixture.Engine(t, fx.Dir, newTestBackend(t), engine.Settings{Keep: engine.Keep{Outputs: true}})
	run := func(px []float32, before func(*engine.Run)) *engine.Run {
		r, err := e.Start(&engine.Input{Pixels: px, Grids: in.Grids})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		before(r)
		if err := r.RunAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var src []float32
	run(xb, func(r *engine.Run) { r.CaptureAttn(block, func(a []float32) { src = a }) })
	got := run(in.Pixels, func(r *engine.Run) {
		if err := r.PatchHead(block, head, rows, src); err != nil {
			t.Fatal(err)
		}
	})
	for b, o := range got.Probes.Outputs() {
		want, err := ref.ReadF32(fmt.Sprintf("patched_blk%d", b))
		if err != nil {
			t.Fatal(err)
		}
		if e := numcheck.RelErr(o, want); !(e <= 1e-5) {
			t.Errorf("block %d: relative error %.3e against transformers' patched run", b, e)
		}
	}
	want, err := ref.ReadF32("patched_pooler_output")
	if err != nil {
		t.Fatal(err)
	}
	if e := numcheck.RelErr(got.Merger, want); !(e <= 1e-5) {
		t.Errorf("merger: relative error %.3e against transformers' patched run", e)
	}
}

// Keys masked from a block on through Backend (the kept keys gathered mid-pass into a buffer
// of their own, each segment's key range passed to the attention kernels apart from its
// queries): every block output and the merger against transformers' masked run
// (make_fixtures.py keymask) within 1e-5, on Qwen3-VL's tower (a video's frames) and
// Qwen2.5-VL's (windowed blocks).
func TestKeyMaskTower(t *testing.T) {
	for _, name := range []string{"qwen3vl", "qwen25vl"} {
		fx, ref := interventionFixture(t, name, "keymask")
		km, err := engine.ParseKeyMask("rows:" + ref.Metadata["rows"] + "@" + ref.Metadata["from"])
		if err != nil {
			t.Fatal(err)
		}
		set := engine.Settings{Keep: engine.Keep{Outputs: true}, Set: intervene.Set{KeyMask: km}}
		got := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, newTestBackend(t), set), fx.Input(t))
		checkIntervened(t, name, got, ref, "masked_", nil)
	}
}

// Tokens dropped after a block through Backend (the hidden state and rope tables re-uploaded
// onto the first rows of their buffers, the later blocks and mergers run on fewer rows): every
// block output (the kept rows after the drop), the merger and deepstack against transformers'
// run with the same drop (make_fixtures.py droptokens) within 1e-5, on Qwen3-VL's and
// Qwen2.5-VL's towers.
func TestTokenDropTower(t *testing.T) {
	for _, name := range []string{"qwen3vl", "qwen25vl"} {
		fx, ref := interventionFixture(t, name, "droptokens")
		k, err := engine.ParseKeepTop(ref.Metadata["keep"] + "@" + ref.Metadata["after"])
		if err != nil {
			t.Fatal(err)
		}
		set := engine.Settings{Keep: engine.Keep{Outputs: true}, Set: intervene.Set{KeepTop: k}}
		got := testfixture.RunAll(t, testfixture.Engine(t, fx.Dir, newTestBackend(t), set), fx.Input(t))
		_, rows := got.Dropped()
		D := got.Config().Hidden
		checkIntervened(t, name, got, ref, "dropped_", func(b int, o []float32) []float32 {
			if b <= k.After {
				return o
			}
			var kept []float32 // transformers' later blocks hold the kept rows only
			for _, r := range rows {
				kept = append(kept, o[r*D:(r+1)*D]...)
			}
			return kept
		})
	}
}

// interventionFixture opens family name's tiny tower and its make_fixtures.py kind file.
func interventionFixture(t *testing.T, name, kind string) (*testfixture.Fixture, *safetensors.File) {
	t.Helper()
	fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", name+"_vision_tiny_f32.safetensors"))
	ref, err := safetensors.Open(filepath.Join("..", "engine", "testdata", name+"_vision_tiny_"+kind+".safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	return fx, ref
}

// checkIntervened compares got's block outputs (through rowsOf, when not nil), merger and
// deepstack with ref's prefix+blk{i}, prefix+pooler_output and prefix+deepstack{k}, within 1e-5.
func checkIntervened(t *testing.T, name string, got *engine.Run, ref *safetensors.File, prefix string, rowsOf func(b int, o []float32) []float32) {
	t.Helper()
	outs := map[string][]float32{"pooler_output": got.Merger}
	for b, o := range got.Probes.Outputs() {
		if rowsOf != nil {
			o = rowsOf(b, o)
		}
		outs[fmt.Sprintf("blk%d", b)] = o
	}
	for i, d := range got.Deepstack {
		outs[fmt.Sprintf("deepstack%d", i)] = d
	}
	for n, g := range outs {
		want, err := ref.ReadF32(prefix + n)
		if err != nil {
			t.Fatal(err)
		}
		if e := numcheck.RelErr(g, want); !(e <= 1e-5) {
			t.Errorf("%s %s: relative error %.3e against transformers' run", name, n, e)
		}
	}
}
