package tower_test

import (
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/engine/tower"
)

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

// Grids and pixel counts that do not fit are refused before anything runs.
func TestBadInputs(t *testing.T) {
	dir := tinyCheckpoint(t)
	ck, err := ckpt.OpenCheckpoint(dir)
	must(t, err)
	eng, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{})
	must(t, err)
	defer eng.Close()
	for _, c := range []struct {
		in   *ckpt.Input
		want string
	}{
		{&ckpt.Input{Pixels: make([]float32, 10), Grids: []geom.Grid{{T: 1, H: 2, W: 2}}}, "pixel_values hold 10 values"},
		{&ckpt.Input{Pixels: make([]float32, 6*1536), Grids: []geom.Grid{{T: 1, H: 2, W: 3}}}, "multiples of the merge size"},
		{&ckpt.Input{}, "no grids"},
	} {
		if _, err := eng.Start(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start: got %v, want an error with %q", err, c.want)
		}
	}
}
