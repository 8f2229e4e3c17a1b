package tower

import (
	"context"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/probe"
)

// SetWindows makes e's pages windowed as windows says (Engine.windows): tests of window
// attention before a family that has it.
func SetWindows(e *Engine, windows func(lay *geom.Layout) error) { e.windows = windows }

// ReplayBlock runs Run.checkBlock's replay of block i (the localization of a non-finite
// value) as if block i's output had not been finite, on the input in; then HiddenRows is what
// the graph holds as its hidden state, on the rows it runs.
func ReplayBlock(r *Run, i int, in []float32) error {
	saved := r.NonFinite
	err := r.checkBlock(context.Background(), i, in, probe.PatchStats{InFinite: true})
	r.NonFinite = saved
	return err
}

// HiddenRows is the graph's hidden state: g.seq rows of D.
func HiddenRows(r *Run) []float32 { return r.download(r.g.buf.h, r.g.seq*r.g.cfg.Hidden) }

// BlockOutput is the last block's output as the run holds it (not lent, unlike Hidden).
func BlockOutput(r *Run) []float32 { return r.cur }
