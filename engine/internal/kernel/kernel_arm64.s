// kernel_arm64.s: the NEON micro-kernel: FMA6x16's contract on arm64 (Apple silicon's CPU
// engine), so engine/cpu's packed MatMul and Attention and the probes take the same paths as
// on amd64 with AVX2+FMA.
//
// Invariant: exactly kernel_amd64.s's lane contract: every one of the 96 float32 lanes (6 x
// rows, 16 outputs) is ONE accumulator that runs acc = fma(x[r,k], w[k,j], acc) for k = 0, 1,
// ..., n-1 in order, one rounding per step (FMLA is fused, as VFMADD231PS is), from y (carry
// != 0) or +0. So arm64 gives the amd64 FMA path's bits, lane for lane (make test-arm64 runs
// the same bit-exact tests under qemu-user).
// Mutation that would silently break it: a VFMUL + VFADD pair in place of one VFMLA for one
// row (two roundings): TestFMARoundsOnce fails on arm64 only.

#include "textflag.h"

// func FMA6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)
//
// Registers: R1-R6 the x rows (each advances 4 bytes per k), R7 the packed W (64 bytes per k),
// R8 the k count left, R9 y. V0-V23 accumulators (row r in V(4r)..V(4r+3)), V24-V27 the W
// lanes of one k, V28-V29 broadcast x values.
TEXT ·FMA6x16(SB), NOSPLIT, $0-40
	MOVD x+0(FP), R0
	MOVD 0(R0), R1
	MOVD 8(R0), R2
	MOVD 16(R0), R3
	MOVD 24(R0), R4
	MOVD 32(R0), R5
	MOVD 40(R0), R6
	MOVD w+8(FP), R7
	MOVD n+16(FP), R8
	MOVD y+24(FP), R9
	MOVD carry+32(FP), R10
	CBZ  R10, zero
	MOVD 0(R9), R11
	VLD1 (R11), [V0.S4, V1.S4, V2.S4, V3.S4]
	MOVD 8(R9), R11
	VLD1 (R11), [V4.S4, V5.S4, V6.S4, V7.S4]
	MOVD 16(R9), R11
	VLD1 (R11), [V8.S4, V9.S4, V10.S4, V11.S4]
	MOVD 24(R9), R11
	VLD1 (R11), [V12.S4, V13.S4, V14.S4, V15.S4]
	MOVD 32(R9), R11
	VLD1 (R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	MOVD 40(R9), R11
	VLD1 (R11), [V20.S4, V21.S4, V22.S4, V23.S4]
	B    start

zero:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16

start:
	CBZ  R8, store

loop:
	VLD1.P 64(R7), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1R.P 4(R1), [V28.S4]
	VLD1R.P 4(R2), [V29.S4]
	VFMLA V24.S4, V28.S4, V0.S4
	VFMLA V25.S4, V28.S4, V1.S4
	VFMLA V26.S4, V28.S4, V2.S4
	VFMLA V27.S4, V28.S4, V3.S4
	VFMLA V24.S4, V29.S4, V4.S4
	VFMLA V25.S4, V29.S4, V5.S4
	VFMLA V26.S4, V29.S4, V6.S4
	VFMLA V27.S4, V29.S4, V7.S4
	VLD1R.P 4(R3), [V28.S4]
	VLD1R.P 4(R4), [V29.S4]
	VFMLA V24.S4, V28.S4, V8.S4
	VFMLA V25.S4, V28.S4, V9.S4
	VFMLA V26.S4, V28.S4, V10.S4
	VFMLA V27.S4, V28.S4, V11.S4
	VFMLA V24.S4, V29.S4, V12.S4
	VFMLA V25.S4, V29.S4, V13.S4
	VFMLA V26.S4, V29.S4, V14.S4
	VFMLA V27.S4, V29.S4, V15.S4
	VLD1R.P 4(R5), [V28.S4]
	VLD1R.P 4(R6), [V29.S4]
	VFMLA V24.S4, V28.S4, V16.S4
	VFMLA V25.S4, V28.S4, V17.S4
	VFMLA V26.S4, V28.S4, V18.S4
	VFMLA V27.S4, V28.S4, V19.S4
	VFMLA V24.S4, V29.S4, V20.S4
	VFMLA V25.S4, V29.S4, V21.S4
	VFMLA V26.S4, V29.S4, V22.S4
	VFMLA V27.S4, V29.S4, V23.S4
	SUBS $1, R8, R8
	BNE  loop

store:
	MOVD 0(R9), R11
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R11)
	MOVD 8(R9), R11
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R11)
	MOVD 16(R9), R11
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R11)
	MOVD 24(R9), R11
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R11)
	MOVD 32(R9), R11
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R11)
	MOVD 40(R9), R11
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R11)
	RET
