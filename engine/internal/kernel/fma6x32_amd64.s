// fma6x32_amd64.s: the AVX-512 micro-kernel, FMA6x16's twin at twice the width (engine/cpu's
// packed MatMul and Attention where the CPU has AVX-512F).
//
// Invariant: exactly FMA6x16's lane contract at 32 lanes: every one of the 192 float32 lanes
// (6 x rows, 32 outputs) is ONE accumulator that runs acc = fma(x[r,k], w[k,j], acc) for
// k = 0, 1, ..., n-1 in order, one rounding per step, from y (carry != 0) or +0. So a lane's
// bits are those FMA6x16 gives the same x row and W column: a 32-wide strip equals two 16-wide
// strips bit for bit (kernel_fma_test.go checks it), and the AVX-512 and AVX2 paths of MatMul
// agree exactly.
// Mutation that would silently break it: folding two k steps into one accumulator pair
// (k even into Z0, k odd into Z12, summed at the end) for latency: a 512-bit-only change in the
// last bits that the AVX2 path would not share.

#include "textflag.h"

// kstep: one k of every lane: the 32 W values of this k at woff(SI) and row r's x at
// xoff(Rr)(DX*4), broadcast, one fused multiply-add per lane.
#define kstep(woff, xoff) \
	VMOVUPS      woff(SI), Z12 \
	VMOVUPS      woff+64(SI), Z13 \
	VBROADCASTSS xoff(R8)(DX*4), Z14 \
	VFMADD231PS  Z12, Z14, Z0 \
	VFMADD231PS  Z13, Z14, Z1 \
	VBROADCASTSS xoff(R9)(DX*4), Z14 \
	VFMADD231PS  Z12, Z14, Z2 \
	VFMADD231PS  Z13, Z14, Z3 \
	VBROADCASTSS xoff(R10)(DX*4), Z14 \
	VFMADD231PS  Z12, Z14, Z4 \
	VFMADD231PS  Z13, Z14, Z5 \
	VBROADCASTSS xoff(R11)(DX*4), Z14 \
	VFMADD231PS  Z12, Z14, Z6 \
	VFMADD231PS  Z13, Z14, Z7 \
	VBROADCASTSS xoff(R12)(DX*4), Z14 \
	VFMADD231PS  Z12, Z14, Z8 \
	VFMADD231PS  Z13, Z14, Z9 \
	VBROADCASTSS xoff(R13)(DX*4), Z14 \
	VFMADD231PS  Z12, Z14, Z10 \
	VFMADD231PS  Z13, Z14, Z11

// func FMA6x32(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)
//
// x[r] points at n float32 of x row r; w at n*32 float32, k-major (32 lanes per k); y[r] at
// the 32 float32 that hold (and receive) row r's lanes. Duplicate pointers are allowed (as in
// FMA6x16). Registers: Z0-Z11 accumulators (row r in Z(2r), Z(2r+1)), Z12-Z13 the W lanes of
// one k, Z14 the broadcast x value.
TEXT ·FMA6x32(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ 32(AX), R12
	MOVQ 40(AX), R13
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ y+24(FP), DI
	MOVQ carry+32(FP), DX
	TESTQ DX, DX
	JZ   zero

	MOVQ    0(DI), BX
	VMOVUPS 0(BX), Z0
	VMOVUPS 64(BX), Z1
	MOVQ    8(DI), BX
	VMOVUPS 0(BX), Z2
	VMOVUPS 64(BX), Z3
	MOVQ    16(DI), BX
	VMOVUPS 0(BX), Z4
	VMOVUPS 64(BX), Z5
	MOVQ    24(DI), BX
	VMOVUPS 0(BX), Z6
	VMOVUPS 64(BX), Z7
	MOVQ    32(DI), BX
	VMOVUPS 0(BX), Z8
	VMOVUPS 64(BX), Z9
	MOVQ    40(DI), BX
	VMOVUPS 0(BX), Z10
	VMOVUPS 64(BX), Z11
	JMP  start

zero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11

start:
	XORQ DX, DX // k

loop2: // two k per iteration: the same per-lane chain, unrolled
	LEAQ 2(DX), AX
	CMPQ AX, CX
	JGT  tail

	kstep(0, 0)

	kstep(128, 4)

	ADDQ $256, SI
	MOVQ AX, DX
	JMP  loop2

tail: // at most one k left
	CMPQ DX, CX
	JGE  store

	kstep(0, 0)

store:
	MOVQ    0(DI), BX
	VMOVUPS Z0, 0(BX)
	VMOVUPS Z1, 64(BX)
	MOVQ    8(DI), BX
	VMOVUPS Z2, 0(BX)
	VMOVUPS Z3, 64(BX)
	MOVQ    16(DI), BX
	VMOVUPS Z4, 0(BX)
	VMOVUPS Z5, 64(BX)
	MOVQ    24(DI), BX
	VMOVUPS Z6, 0(BX)
	VMOVUPS Z7, 64(BX)
	MOVQ    32(DI), BX
	VMOVUPS Z8, 0(BX)
	VMOVUPS Z9, 64(BX)
	MOVQ    40(DI), BX
	VMOVUPS Z10, 0(BX)
	VMOVUPS Z11, 64(BX)
	VZEROUPPER
	RET
