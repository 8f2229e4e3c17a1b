package engine

import "github.com/turbospark/inspector/engine/geom"

// SetWindows makes e's pages windowed as windows says (Engine.windows): tests of window
// attention before a family that has it.
func SetWindows(e *Engine, windows func(lay *geom.Layout) error) { e.windows = windows }
