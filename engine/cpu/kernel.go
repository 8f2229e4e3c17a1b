// kernel.go: the micro-kernels MatMul and Attention run live in engine/internal/kernel (shared
// with the engine's attention analysis): the generic pure-Go kernel.Dot3x2 and, on amd64 with
// AVX2+FMA, the assembly kernel.FMA6x16, chosen by kernel.UseFMA (fixed at start-up; tests
// flip it). See that package for their invariants; this file keeps the bounds-checked
// pointer helper that every caller of them here uses.
//
// Invariant: every pointer handed to a kernel comes from rowPtr, so the n elements the kernel
// will read are bounds-checked first.
// Mutation that would silently break it: passing unsafe.Pointer(&s[off]) (only s[off] checked):
// an indexing bug would then read stray memory instead of panicking.
package cpu

import "unsafe"

// rowPtr is the address of s[off] after a bounds check of s[off : off+n], the n elements
// the kernel will read from it: an indexing bug panics instead of reading stray memory.
func rowPtr(s []float32, off, n int) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(s[off : off+n]))
}
