// Package testfixture opens the transformers reference files the parity tests share
// (engine/testdata/*.safetensors: weights under model.visual., inputs X and G, outputs,
// and the vision config as JSON under the metadata key "cfg") as checkpoint directories.
package testfixture

import (
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/safetensors"
)

// Fixture is one reference file and the checkpoint directory made from it.
type Fixture struct {
	Path string
	File *safetensors.File
	Dir  string
}

// Open makes a checkpoint directory from the reference file at path: config.json from
// its metadata (the vision config "cfg", and "model_type" where the file names one: qwen3_vl
// otherwise), the file itself (symlinked) as model.safetensors — its inputs and outputs
// are not vision tensors, so the loader ignores them as it would a language model.
func Open(t testing.TB, path string) *Fixture {
	t.Helper()
	abs, err := filepath.Abs(path)
	must(t, err)
	f, err := safetensors.Open(abs)
	must(t, err)
	var vision map[string]any
	must(t, json.Unmarshal([]byte(f.Metadata["cfg"]), &vision))
	dir := t.TempDir()
	modelType := f.Metadata["model_type"]
	if modelType == "" {
		modelType = "qwen3_vl"
	}
	cfg, _ := json.Marshal(map[string]any{"model_type": modelType, "vision_config": vision})
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	must(t, os.Symlink(abs, filepath.Join(dir, "model.safetensors")))
	return &Fixture{Path: abs, File: f, Dir: dir}
}

// F32 reads one tensor as float32.
func (fx *Fixture) F32(t testing.TB, name string) []float32 {
	t.Helper()
	v, err := fx.File.ReadF32(name)
	must(t, err)
	return v
}

// Input is the fixture's page: X (pixel_values rows) and G (grid_thw rows).
func (fx *Fixture) Input(t testing.TB) *engine.Input {
	t.Helper()
	g, err := fx.File.ReadI64("G")
	must(t, err)
	in := &engine.Input{Pixels: fx.F32(t, "X")}
	for i := 0; i+2 < len(g); i += 3 {
		in.Grids = append(in.Grids, geom.Grid{T: int(g[i]), H: int(g[i+1]), W: int(g[i+2])})
	}
	return in
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Engine opens the checkpoint in dir on be; it is closed when the test ends.
func Engine(t testing.TB, dir string, be backend.Backend, opts engine.Settings) *engine.Engine {
	t.Helper()
	ck, err := engine.OpenCheckpoint(dir)
	must(t, err)
	e, err := engine.NewEngine(ck, be, opts)
	must(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// RunAll runs every block of in and the merger on e; the run is closed when the test ends.
func RunAll(t testing.TB, e *engine.Engine, in *engine.Input) *engine.Run {
	t.Helper()
	run, err := e.Start(in)
	must(t, err)
	t.Cleanup(run.Close)
	must(t, run.RunAll(context.Background()))
	return run
}

// ReadPNG decodes the PNG file at path, failing t when it cannot.
func ReadPNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}
