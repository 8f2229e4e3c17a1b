// Package kernel holds the register-blocked float32 dot-product micro-kernels shared by
// engine/cpu (MatMul, Attention) and engine (the attention analysis): the generic pure-Go
// Dot3x2 and the assembly FMA6x16 (AVX2+FMA on amd64, kernel_amd64.s; NEON on arm64,
// kernel_arm64.s), chosen by UseFMA; on amd64 with AVX-512 also FMA6x32 (the same lanes, 32
// wide) and the vector softmax and GELU pieces (softmax_amd64.s), chosen by UseAVX512.
//
// Invariant: every output of either kernel is ONE float32 accumulator that adds x[i]*w[i] for
// i = 0, 1, ..., n-1 in order, starting from the value passed in. So a dot product cut into
// k-blocks (acc carried through memory between calls) has exactly the bits of the uncut one,
// and the result does not depend on blocking, tiling or the thread count.
// Mutation that would silently break it: splitting an accumulator into partial sums
// (e.g. even/odd lanes "for ILP") in one kernel but not in another: rows computed by different
// code paths would then differ in the last bits, depending on the partition.
// Dot3x2 (this file) rounds the product, then the sum, at each step; FMA6x16 rounds once per
// step. Results differ between the two in the last bits, never within one; UseFMA is fixed at
// start-up (tests aside), so a process only ever uses one of them.
//
// Invariant (fusion): Dot3x2 writes every product as float32(a*b). The Go spec lets a compiler
// fuse c += a*b into one fused multiply-add (rounding once) unless an explicit conversion rounds
// the product; Go's arm64 backend (every Apple-silicon Mac) and amd64 built with GOAMD64=v3 or
// later do fuse it. The conversion is what makes Dot3x2 round twice on every architecture, so
// its bits are the same on amd64, arm64 and any other GOARCH; it costs nothing (no instruction).
// Mutation that would silently break it: dropping one float32(...) "as redundant": amd64 builds
// with the default GOAMD64=v1 do not change, but on arm64 the generic kernel silently becomes an
// FMA chain (engine/cpu's TestFMARoundsOnce fails there: got 2^-24, want 0; make test-arm64 runs
// it, and first rejects any FMADDS in the engine's arm64 assembly, naming the line); one dropped
// in the main loop but kept in the tail (or the reverse) would also make the bits depend on
// where a caller cuts a dot product into k-blocks.
package kernel

import "unsafe"

// EnvAMX turns the AMX path off when set to "off" (a comparison, or a suspected fault).
const EnvAMX = "INSPECTOR_AMX"

// Name names the MatMul kernels this process takes now: "generic", "fma" (AVX2), "avx512",
// or "avx512+amx" (BF16 weights on the AMX tile unit, the rest AVX-512).
func Name() string {
	switch {
	case UseAMX:
		return "avx512+amx"
	case UseAVX512:
		return "avx512"
	case UseFMA:
		return "fma"
	}
	return "generic"
}

// AMXSplitRows is how many rows of x engine/cpu's AMX MatMul path cuts into bfloat16 pieces at
// a time; its buffer holds 6 bytes per row and k (k padded to a multiple of 32), and a weight
// too large for its pack cache takes 2 bytes per element (padded likewise) for the call.
const AMXSplitRows = 1024

// Dot3x2 updates acc[2*a+b] += sum_i xa[i]*wb[i] over i in [0, n), for x rows a = 0..2 and
// w rows b = 0..1, each row n contiguous float32 from its pointer; every step rounds the
// product, then the sum, and is never fused (see the package comment). Callers pass the same
// pointer twice to fill an unused slot (the result is then discarded) and guarantee that
// n elements are readable at every pointer.
//
// Shape choice (measured, see engine/cpu's benchmarks): 3x2 keeps 6 accumulators, 6 products and
// the loaded operands within the 15 usable XMM registers of Go's scalar SSE code (3x4 and
// 4x4 spill and run at a third of the speed); 6 independent chains cover the 3-cycle add
// latency; unrolling by 4 amortizes the loop overhead.
func Dot3x2(x0, x1, x2, w0, w1 unsafe.Pointer, n int, acc *[6]float32) {
	c00, c01, c10, c11, c20, c21 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
	i := 0
	for ; i+4 <= n; i += 4 {
		o := uintptr(i) * 4
		a0 := (*[4]float32)(unsafe.Add(x0, o))
		a1 := (*[4]float32)(unsafe.Add(x1, o))
		a2 := (*[4]float32)(unsafe.Add(x2, o))
		b0 := (*[4]float32)(unsafe.Add(w0, o))
		b1 := (*[4]float32)(unsafe.Add(w1, o))
		c00 += float32(a0[0] * b0[0])
		c01 += float32(a0[0] * b1[0])
		c10 += float32(a1[0] * b0[0])
		c11 += float32(a1[0] * b1[0])
		c20 += float32(a2[0] * b0[0])
		c21 += float32(a2[0] * b1[0])
		c00 += float32(a0[1] * b0[1])
		c01 += float32(a0[1] * b1[1])
		c10 += float32(a1[1] * b0[1])
		c11 += float32(a1[1] * b1[1])
		c20 += float32(a2[1] * b0[1])
		c21 += float32(a2[1] * b1[1])
		c00 += float32(a0[2] * b0[2])
		c01 += float32(a0[2] * b1[2])
		c10 += float32(a1[2] * b0[2])
		c11 += float32(a1[2] * b1[2])
		c20 += float32(a2[2] * b0[2])
		c21 += float32(a2[2] * b1[2])
		c00 += float32(a0[3] * b0[3])
		c01 += float32(a0[3] * b1[3])
		c10 += float32(a1[3] * b0[3])
		c11 += float32(a1[3] * b1[3])
		c20 += float32(a2[3] * b0[3])
		c21 += float32(a2[3] * b1[3])
	}
	for ; i < n; i++ { // tail: same accumulators, same order
		o := uintptr(i) * 4
		a0 := *(*float32)(unsafe.Add(x0, o))
		a1 := *(*float32)(unsafe.Add(x1, o))
		a2 := *(*float32)(unsafe.Add(x2, o))
		b0 := *(*float32)(unsafe.Add(w0, o))
		b1 := *(*float32)(unsafe.Add(w1, o))
		c00 += float32(a0 * b0)
		c01 += float32(a0 * b1)
		c10 += float32(a1 * b0)
		c11 += float32(a1 * b1)
		c20 += float32(a2 * b0)
		c21 += float32(a2 * b1)
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5] = c00, c01, c10, c11, c20, c21
}
