package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/internal/numcheck"
)

// fixture is a transformers reference file: weights, inputs and outputs in one safetensors.
type fixture struct {
	path string
	f    *safetensors.File
	dir  string // a checkpoint directory made from it
}

// openFixture turns testdata/NAME.safetensors into a checkpoint directory: config.json from
// the vision config in its metadata, the file itself as model.safetensors (its non-vision
// tensors — inputs and outputs — are ignored by the loader, as a language model would be).
func openFixture(t testing.TB, name string) *fixture {
	t.Helper()
	path := filepath.Join("testdata", name+".safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var vision map[string]any
	if err := json.Unmarshal([]byte(f.Metadata["cfg"]), &vision); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"model_type": "qwen3_vl", "vision_config": vision})
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	abs, _ := filepath.Abs(path)
	must(t, os.Symlink(abs, filepath.Join(dir, "model.safetensors")))
	return &fixture{path: path, f: f, dir: dir}
}

func (fx *fixture) f32(t testing.TB, name string) []float32 {
	t.Helper()
	v, err := fx.f.ReadF32(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// input reads X (pixel_values) and G (grid_thw rows).
func (fx *fixture) input(t testing.TB) *engine.Input {
	g, err := fx.f.ReadI64("G")
	if err != nil {
		t.Fatal(err)
	}
	in := &engine.Input{Pixels: fx.f32(t, "X")}
	for i := 0; i+2 < len(g); i += 3 {
		in.Grids = append(in.Grids, engine.Grid{T: int(g[i]), H: int(g[i+1]), W: int(g[i+2])})
	}
	return in
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runTower runs a whole page and returns the run (outputs kept).
func runTower(t testing.TB, dir string, be engine.Backend, opts engine.Options, in *engine.Input) *engine.Run {
	t.Helper()
	ck, err := engine.OpenCheckpoint(dir)
	must(t, err)
	opts.KeepOutputs = true
	eng, err := engine.NewEngine(ck, be, opts)
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	run, err := eng.Start(in)
	must(t, err)
	t.Cleanup(run.Close)
	must(t, run.RunAll(context.Background()))
	return run
}

func cpuBackend() engine.Backend { return cpu.New(0) }

var (
	relErr   = numcheck.RelErr
	bitEqual = numcheck.BitEqual
)
