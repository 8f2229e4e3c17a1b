package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/internal/testfixture"
)

// fixture is a transformers reference file in testdata/ opened as a checkpoint directory.
type fixture struct {
	*testfixture.Fixture
	dir string
}

func openFixture(t testing.TB, name string) *fixture {
	t.Helper()
	fx := testfixture.Open(t, filepath.Join("testdata", name+".safetensors"))
	return &fixture{Fixture: fx, dir: fx.Dir}
}

func (fx *fixture) input(t testing.TB) *engine.Input { return fx.Input(t) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func cpuBackend() backend.Backend { return cpu.New(0) }

// tinyCheckpoint writes a valid tiny f32 checkpoint and returns its directory.
func tinyCheckpoint(t *testing.T) string {
	t.Helper()
	cfg, err := synth.Preset("tiny")
	must(t, err)
	dir := t.TempDir()
	must(t, synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 3}))
	return dir
}
