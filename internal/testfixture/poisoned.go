package testfixture

import (
	"math"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
)

// Poisoned writes the tiny preset (f32) into a new folder of t with one NaN in tensor bad,
// and returns the folder: a checkpoint whose run goes non-finite from that tensor on.
func Poisoned(t testing.TB, bad string) string {
	t.Helper()
	cfg, err := synth.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 3, Fill: func(name string, shape []int) []float32 {
		if name != bad {
			return nil
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		vals := make([]float32, n)
		vals[5] = float32(math.NaN())
		return vals
	}}); err != nil {
		t.Fatal(err)
	}
	return dir
}
