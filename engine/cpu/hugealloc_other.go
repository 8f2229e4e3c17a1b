//go:build !linux

// hugealloc_other.go: the pack cache's memory where there is no MADV_HUGEPAGE (macOS: Apple
// silicon's 16 KiB pages already cut the faults by four): the Go heap.
package cpu

func hugeAlloc(n int) ([]float32, bool) { return make([]float32, n), false }

func hugeFree([]float32, bool) {}
