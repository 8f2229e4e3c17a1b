package ckpt_test

import (
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/internal/testfixture"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixture is a transformers reference file in engine/testdata/ opened as a checkpoint
// directory.
type fixture struct{ dir string }

func openFixture(t testing.TB, name string) fixture {
	t.Helper()
	return fixture{dir: testfixture.Open(t, filepath.Join("..", "testdata", name+".safetensors")).Dir}
}

// tinyCheckpoint writes a valid tiny f32 checkpoint and returns its directory.
func tinyCheckpoint(t *testing.T) string { return tinyCheckpointDType(t, dtype.F32) }

// tinyCheckpointDType writes a valid tiny checkpoint of weights in d and returns its directory.
func tinyCheckpointDType(t *testing.T, d dtype.DType) string {
	t.Helper()
	cfg, err := synth.Preset("tiny")
	must(t, err)
	dir := t.TempDir()
	must(t, synth.Write(dir, cfg, synth.Options{DType: d, Seed: 3}))
	return dir
}
