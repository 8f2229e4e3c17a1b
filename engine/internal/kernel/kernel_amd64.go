// kernel_amd64.go: the Go declaration of the AVX2+FMA micro-kernel and the start-up choice.
//
// Invariant: UseFMA is decided once, at package init, from the CPU alone (never from a shape,
// a row count or a thread count), so every MatMul of a process takes the same kernel and a
// row tiling of the engine cannot switch kernels between tiles; the engine's attention
// analysis reads the same switch.
// Mutation that would silently break it: choosing the generic kernel for "small" calls
// (rows < 6, say): a row computed in a small engine tile would then differ in the last bits
// from the same row computed in a large one.
package kernel

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// HasFMA says whether this CPU can run FMA6x16. Nothing may write it.
var HasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// UseFMA selects the FMA6x16 paths (engine/cpu's packed MatMul and Attention, engine's
// attention scores). It starts as HasFMA; tests flip it (never to true without HasFMA) to
// run the generic paths too, and restore it; nothing else may write it.
var UseFMA = HasFMA

// FMA6x16 is implemented in kernel_amd64.s; see there for the contract. Call it only when
// HasFMA.
//
//go:noescape
func FMA6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)

// HasAVX512 says whether this CPU (and OS) can run the AVX-512 kernels: AVX-512F (x/sys/cpu
// checks that the OS saves the ZMM and mask state) and BMI2 (RopeHalves' SHLX; every AVX-512
// CPU has it, a VM could hide it). Nothing may write it.
var HasAVX512 = HasFMA && cpu.X86.HasAVX512F && cpu.X86.HasBMI2

// UseAVX512 selects FMA6x32 for the packed paths that UseFMA selects; it gives the same bits as
// FMA6x16 (the lane contract is the same), only faster. Tests flip it like UseFMA.
var UseAVX512 = HasAVX512

// FMA6x32 is implemented in fma6x32_amd64.s: FMA6x16's contract with 32 lanes per k. Call it
// only when HasAVX512.
//
//go:noescape
func FMA6x32(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)

// GELUTanh (softmax_amd64.s) applies gelu_pytorch_tanh to x[0:n] in place, in float32 within
// a few ulp. Call it only when HasAVX512.
//
//go:noescape
func GELUTanh(x *float32, n int)

// PackBF16x32 (pack_amd64.s) writes dst[k*32+j] = W[j,k] widened from BF16 for k < 2*kpairs,
// rows j < 32 at src + j*rowBytes (32*rowBytes < 2^31). Call it only when HasAVX512.
//
//go:noescape
func PackBF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int)

// Transpose (transpose_amd64.s) writes dst[j*ldd + i] = src[i*lds + j] for i < rows and
// j < cols, the elements 32 bits each (float32, or a pair of bfloat16) and the strides in
// elements, touching nothing else: the flash attention's Q^T and V^T packing, and AMX's VNNI
// tiles (a k pair of 16 weight rows is one element of each row). The bits are moved, never
// read as numbers. Call it only when HasAVX512.
//
//go:noescape
func Transpose(dst unsafe.Pointer, ldd int, src unsafe.Pointer, lds int, rows, cols int)

// DivTranspose (transpose_amd64.s) writes out[c*ldo + d] = float32(float64(ob[d*32 + c]) /
// sum[c]) for c < n and d < hd, touching nothing else: the flash attention's output from its
// O^T block and the float64 sums, the scalar loop's bits. Call it only when HasAVX512.
//
//go:noescape
func DivTranspose(out *float32, ldo int, ob *float32, sum *float64, n, hd int)

// ColScaleMax (softmax_amd64.s) scales a [rows][32] tile in place and writes each column's
// max to m (-Inf for rows 0). Call it only when HasAVX512.
//
//go:noescape
func ColScaleMax(s *float32, rows int, scale float32, m *[32]float32)

// ColExpSum (softmax_amd64.s) replaces s[r][q] by exp(s[r][q]-m[q]) in a [rows][32] tile and
// adds each column's float64 sum, in row order, to sum[q]. Call it only when HasAVX512.
//
//go:noescape
func ColExpSum(s *float32, rows int, m *[32]float32, sum *[32]float64)

// ColScale (softmax_amd64.s) multiplies column q of a [rows][32] tile by a[q]. Call it only
// when HasAVX512.
//
//go:noescape
func ColScale(o *float32, rows int, a *[32]float32)

// PackF16x32 is PackBF16x32 for F16 weights.
//
//go:noescape
func PackF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int)

// RopeHalves (pack_amd64.s) rotates one head of 2*half values in place, HALVES convention,
// each product rounded before its add: engine/cpu's ropeHead, 16 lanes at a time, same bits.
// Call it only when HasAVX512.
//
//go:noescape
func RopeHalves(x *float32, cos *float32, sin *float32, half int)

// SumF64 (norm_amd64.s) is the float64 sum of x[0:n16] (n16 a multiple of 16) in the fixed
// order of norm_amd64.s. Call it only when HasAVX512.
//
//go:noescape
func SumF64(x *float32, n16 int) float64

// SumSqDevF64 (norm_amd64.s) is the float64 sum of (float64(x[i]) - mean)^2, each square
// rounded, over x[0:n16]. Call it only when HasAVX512.
//
//go:noescape
func SumSqDevF64(x *float32, n16 int, mean float64) float64

// NormAffine (norm_amd64.s) writes out[i] = float32(float32((float64(x[i])-mean)*inv)*w[i]) +
// b[i] for i < n16; out may be x. Call it only when HasAVX512.
//
//go:noescape
func NormAffine(out, x, w, b *float32, n16 int, mean, inv float64)

// AddRows (add_amd64.s) adds dst[r*ld+j] += src[r*lds+j] for r < rows, j < n: a bias row to
// every row (lds 0), or a block of rows to another. Each element one float32 addition, the
// bits of the scalar loop. Call it only when HasAVX512.
//
//go:noescape
func AddRows(dst *float32, ld int, src *float32, lds int, rows int, n int)

// RowSumsF64 (stats_amd64.s) sums one row of n values x against in (a block's output and
// input row) in float64, 8 lanes then a fixed order: s = {sum x^2, sum x, sum (x-in)^2,
// sum in^2, max |x| with NaN skipped}. Each value widened exactly, each product rounded before
// its add; the sums' order is not the index order (the last bits differ from a scalar loop's).
// Call it only when HasAVX512.
//
//go:noescape
func RowSumsF64(x, in *float32, n int, s *[5]float64)
