//go:build !linux

package engine

// populate does nothing where there is no MADV_POPULATE_WRITE (macOS): the copy that fills f
// faults its pages in (on the download's threads, each its own rows).
func populate([]float32, int) {}
