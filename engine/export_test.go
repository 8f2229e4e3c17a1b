package engine

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

// RecordPrefaults makes the mapped residency's prefaults call f with each span instead of
// mapping it (the kernel maps pages around the ones asked for, so pages alone cannot tell which
// were asked); restore puts the real one back.
func RecordPrefaults(f func([]byte)) (restore func()) {
	saved := prefaultSpan
	prefaultSpan = f
	return func() { prefaultSpan = saved }
}

// WaitPrefault waits for the mapped residency's prefault in flight (none: returns at once).
func WaitPrefault(r Residency) {
	if m, ok := r.(*mappedRes); ok {
		m.mu.Lock()
		m.ahead.Wait()
		m.mu.Unlock()
	}
}

// PrefaultPages is the mapped residency's prefault of one span (the kernel's, not a recorder).
var PrefaultPages = prefault

// BlockOutput is the last block's output as the run holds it (not lent, unlike Hidden).
func BlockOutput(r *Run) []float32 { return r.cur }

// PopulateRows is populate: the pages of fresh memory mapped ahead of the copy that fills it.
var PopulateRows = populate
