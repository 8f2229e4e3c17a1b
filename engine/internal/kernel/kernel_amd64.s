// kernel_amd64.s: the AVX2+FMA micro-kernel (engine/cpu's packed MatMul and Attention paths,
// engine's attention scores).
//
// Invariant: every one of the 96 float32 lanes (6 x rows, 16 outputs) is ONE accumulator
// that runs acc = fma(x[r,k], w[k,j], acc) for k = 0, 1, ..., n-1 in order, one rounding per
// step, from the value loaded from y (carry != 0) or from +0 (carry == 0). Lanes never mix,
// so a lane's bits depend only on its x row, its packed W column and n: not on which slot of
// the tile the row sits in, nor on the other rows.
// Mutation that would silently break it: splitting a lane into two partial sums over even and
// odd k "for latency" (results would then differ from the single chain in the last bits, and
// across kc when k-blocks carry), or summing the products with VMULPS+VADDPS in one place
// and VFMADD231PS in another.

#include "textflag.h"

// func FMA6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)
//
// x[r] points at n float32 of x row r; w at n*16 float32, k-major (16 lanes per k); y[r] at
// the 16 float32 that hold (and receive) row r's lanes. Duplicate pointers in x and y are
// allowed: all lanes are loaded before the loop and stored after it, and duplicate rows
// compute the same bits, so a duplicate store writes the same values twice.
// Registers: Y0-Y11 accumulators (row r in Y(2r), Y(2r+1)), Y12-Y13 the W lanes of one k,
// Y14-Y15 the broadcast x values. R14, R15 and BP are not used.
TEXT ·FMA6x16(SB), NOSPLIT, $0-40
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
	VMOVUPS 0(BX), Y0
	VMOVUPS 32(BX), Y1
	MOVQ    8(DI), BX
	VMOVUPS 0(BX), Y2
	VMOVUPS 32(BX), Y3
	MOVQ    16(DI), BX
	VMOVUPS 0(BX), Y4
	VMOVUPS 32(BX), Y5
	MOVQ    24(DI), BX
	VMOVUPS 0(BX), Y6
	VMOVUPS 32(BX), Y7
	MOVQ    32(DI), BX
	VMOVUPS 0(BX), Y8
	VMOVUPS 32(BX), Y9
	MOVQ    40(DI), BX
	VMOVUPS 0(BX), Y10
	VMOVUPS 32(BX), Y11
	JMP  start

zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

start:
	XORQ DX, DX // k

loop2: // two k per iteration: the same per-lane chain, unrolled
	LEAQ 2(DX), AX
	CMPQ AX, CX
	JGT  tail

	VMOVUPS      0(SI), Y12
	VMOVUPS      32(SI), Y13
	VBROADCASTSS (R8)(DX*4), Y14
	VBROADCASTSS (R9)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (R10)(DX*4), Y14
	VBROADCASTSS (R11)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R12)(DX*4), Y14
	VBROADCASTSS (R13)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11

	VMOVUPS      64(SI), Y12
	VMOVUPS      96(SI), Y13
	VBROADCASTSS 4(R8)(DX*4), Y14
	VBROADCASTSS 4(R9)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS 4(R10)(DX*4), Y14
	VBROADCASTSS 4(R11)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS 4(R12)(DX*4), Y14
	VBROADCASTSS 4(R13)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11

	ADDQ $128, SI
	MOVQ AX, DX
	JMP  loop2

tail: // at most one k left
	CMPQ DX, CX
	JGE  store

	VMOVUPS      0(SI), Y12
	VMOVUPS      32(SI), Y13
	VBROADCASTSS (R8)(DX*4), Y14
	VBROADCASTSS (R9)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (R10)(DX*4), Y14
	VBROADCASTSS (R11)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R12)(DX*4), Y14
	VBROADCASTSS (R13)(DX*4), Y15
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11

store:
	MOVQ    0(DI), BX
	VMOVUPS Y0, 0(BX)
	VMOVUPS Y1, 32(BX)
	MOVQ    8(DI), BX
	VMOVUPS Y2, 0(BX)
	VMOVUPS Y3, 32(BX)
	MOVQ    16(DI), BX
	VMOVUPS Y4, 0(BX)
	VMOVUPS Y5, 32(BX)
	MOVQ    24(DI), BX
	VMOVUPS Y6, 0(BX)
	VMOVUPS Y7, 32(BX)
	MOVQ    32(DI), BX
	VMOVUPS Y8, 0(BX)
	VMOVUPS Y9, 32(BX)
	MOVQ    40(DI), BX
	VMOVUPS Y10, 0(BX)
	VMOVUPS Y11, 32(BX)
	VZEROUPPER
	RET
