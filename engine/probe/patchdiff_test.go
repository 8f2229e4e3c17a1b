package probe_test

import (
	"math"
	"testing"

	"github.com/turbospark/inspector/engine/probe"
)

func TestPatchDiff(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 2.5, 3, 4, 5, 2}
	got := probe.PatchDiff(a, b, 3)
	if len(got) != 2 || got[0] != 0.5 || got[1] != 4 {
		t.Errorf("PatchDiff = %v, want [0.5 4]", got)
	}
	nan := float32(math.NaN())
	if got := probe.PatchDiff([]float32{nan, 1}, []float32{nan, 1}, 2); got[0] != 0 {
		t.Errorf("NaN against NaN: %v", got)
	}
	if got := probe.PatchDiff([]float32{nan, 1}, []float32{0, 1}, 2); !math.IsInf(float64(got[0]), 1) {
		t.Errorf("NaN against a number: %v", got)
	}
}
