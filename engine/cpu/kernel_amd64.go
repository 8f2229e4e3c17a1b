// kernel_amd64.go: the Go declaration of the AVX2+FMA micro-kernel and the start-up choice.
//
// Invariant: useFMA is decided once, at package init, from the CPU alone (never from a shape,
// a row count or a thread count), so every MatMul of a process takes the same kernel and a
// row tiling of the engine cannot switch kernels between tiles.
// Mutation that would silently break it: choosing the generic kernel for "small" calls
// (rows < 6, say): a row computed in a small engine tile would then differ in the last bits
// from the same row computed in a large one.
package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useFMA selects the packed AVX2+FMA MatMul path (matmul_fma.go). Tests flip it to run the
// generic path too; nothing else may write it.
var useFMA = hasFMA

// hasFMA says whether this CPU can run fmaKernel6x16.
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// fmaKernel6x16 is implemented in kernel_amd64.s; see there for the contract.
//
//go:noescape
func fmaKernel6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)
