//go:build !linux

package engine

// populate does nothing where there is no MADV_POPULATE_WRITE (macOS): the copy that fills f
// faults its pages in.
func populate([]float32) {}
