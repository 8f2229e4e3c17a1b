package synth

import (
	"math"

	"github.com/turbospark/inspector/engine/dtype"
)

// WritePoisoned writes preset's checkpoint (f32, seed 3) into dir with one NaN in tensor bad:
// a checkpoint whose run goes non-finite from that tensor on, for the tests of what the
// inspector says then.
func WritePoisoned(dir, preset, bad string) error {
	cfg, err := Preset(preset)
	if err != nil {
		return err
	}
	return Write(dir, cfg, Options{DType: dtype.F32, Seed: 3, Fill: func(name string, shape []int) []float32 {
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
	}})
}
