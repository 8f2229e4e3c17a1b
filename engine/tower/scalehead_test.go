package tower_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

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

// Scaling head h's columns of what proj reads by F is scaling proj's weight columns of head h
// by F (proj(x) = x W^T + b): the plain engine — itself within 1e-5 of transformers on this
// tower — run on a copy of the checkpoint with those weight columns scaled is the reference,
// within 1e-5 (only the products' roundings differ), on both tiny towers.
func TestScaleHeadIsScaledProjWeights(t *testing.T) {
	for _, c := range []struct{ tower, spec string }{
		{"qwen3vl_vision_tiny_f32", "1:2=0.5,2:0=1.5,2:3=-1"},
		{"qwen25vl_vision_tiny_f32", "0:1=0.5,1:0=2,2:3=0.25"},
	} {
		fx := openFixture(t, c.tower)
		sh, err := intervene.ParseScaleHeads(c.spec)
		must(t, err)
		scaled := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{ScaleHead: sh}}, fx.input(t))
		dir := scaledProjCheckpoint(t, fx, c.spec)
		want := runTower(t, dir, cpuBackend(), tower.Settings{}, fx.input(t))
		for name, g := range towerOutputs(scaled) {
			if e := relErr(g, towerOutputs(want)[name]); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against the scaled proj weights", c.tower, name, e)
			}
		}
		if e := relErr(scaled.Merger, fx.f32(t, "pooler_output")); e < 1e-3 {
			t.Errorf("%s: the merger moved by only %.2e", c.tower, e)
		}
	}
}

// scaledProjCheckpoint is fx's checkpoint with blocks.B.attn.proj.weight's columns of head H
// times F for each B:H=F of spec (the tower's other tensors as they are).
func scaledProjCheckpoint(t *testing.T, fx *fixture, spec string) string {
	t.Helper()
	var cfg struct {
		Hidden int `json:"hidden_size"`
		Heads  int `json:"num_heads"`
	}
	must(t, json.Unmarshal([]byte(fx.f.Metadata["cfg"]), &cfg))
	hd := cfg.Hidden / cfg.Heads
	var ts []safetensors.Tensor
	for name, info := range fx.f.Tensors {
		if !strings.HasPrefix(name, "model.visual.") {
			continue
		}
		x, err := fx.f.ReadF32(name)
		must(t, err)
		ts = append(ts, safetensors.F32Tensor(name, info.Shape, x))
	}
	for _, item := range strings.Split(spec, ",") {
		var b, h int
		var f float32
		if _, err := fmt.Sscanf(item, "%d:%d=%g", &b, &h, &f); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("model.visual.blocks.%d.attn.proj.weight", b)
		i := slices.IndexFunc(ts, func(x safetensors.Tensor) bool { return x.Name == name })
		if i < 0 {
			t.Fatalf("no %s", name)
		}
		w := make([]float32, cfg.Hidden*cfg.Hidden) // [D out, D in]: head h's inputs are columns h*hd..
		dtype.DecodeF32(w, ts[i].Data, dtype.F32)
		for r := range cfg.Hidden {
			for c := h * hd; c < (h+1)*hd; c++ {
				w[r*cfg.Hidden+c] *= f
			}
		}
		ts[i] = safetensors.F32Tensor(name, ts[i].Shape, w)
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), mustRead(t, filepath.Join(fx.dir, "config.json")), 0o644))
	must(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil))
	return dir
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return b
}
