package tower_test

import (
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/internal/testfixture"
)

// fixture is a transformers reference file in engine/testdata/ opened as a checkpoint directory.
type fixture struct {
	*testfixture.Fixture
	path string
	f    *safetensors.File
	dir  string
}

func openFixture(t testing.TB, name string) *fixture {
	t.Helper()
	fx := testfixture.Open(t, filepath.Join("..", "testdata", name+".safetensors"))
	return &fixture{Fixture: fx, path: fx.Path, f: fx.File, dir: fx.Dir}
}

func (fx *fixture) f32(t testing.TB, name string) []float32 { return fx.F32(t, name) }

func (fx *fixture) input(t testing.TB) *ckpt.Input { return fx.Input(t) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runTower runs a whole page and returns the run (outputs kept).
func runTower(t testing.TB, dir string, be backend.Backend, opts tower.Settings, in *ckpt.Input) *tower.Run {
	t.Helper()
	opts.Keep.Outputs = true
	return testfixture.RunAll(t, testfixture.Engine(t, dir, be, opts), in)
}

func cpuBackend() backend.Backend { return cpu.New(0) }

var (
	relErr   = numcheck.RelErr
	bitEqual = numcheck.BitEqual
)

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
