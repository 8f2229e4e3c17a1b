//go:build !linux

package ckpt

// Populate does nothing where there is no MADV_POPULATE_WRITE (macOS): the copy that fills f
// faults its pages in (on the download's threads, each its own rows).
func Populate([]float32, int) {}
