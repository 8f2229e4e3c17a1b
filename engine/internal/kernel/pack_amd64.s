// pack_amd64.s: widening a strip of 32 weight rows into FMA6x32's k-major panel with AVX-512
// (engine/cpu's packPanel, the aligned BF16 and F16 cases; F32's panel is kernel.Transpose's):
// per half strip, blocks of 16 rows x 16 columns (a column a pair of k, 32 bits) loaded,
// transposed in registers (transpose_amd64.h's 64 shuffles), and each column widened and
// stored as two panel rows. The first version gathered a column of 32 rows at a time; on AMD
// Zen 5 a gather of 16 dwords took about as long as 16 scalar loads.
//
// Invariant: dst[k*32 + j] = float32(W[j, k]) exactly (BF16: the 16 bits moved up, nothing
// rounded; F16: VCVTPH2PS, exact, subnormals and Inf/NaN included), for j < 32 and every k
// asked: the same values as the scalar packers, so the packer never changes a product's bits
// (engine/cpu's TestPackStripFastMatchesGeneric). Columns past the count are masked off on
// the load (nothing read past a row's last k) and never stored.
// Mutation that would silently break it: taking the k+1 half of a BF16 pair from the low 16
// bits (swapping k and k+1): every product then pairs x[k] with W[k+1], and only a test that
// compares packed values (not the sums' tolerance) is sure to see it.

#include "textflag.h"
#include "transpose_amd64.h"

// STRIPROWS16 loads the half strip's 16 rows (BX on, R9 bytes apart), the columns in K1.
#define STRIPROW(z) \
	VMOVDQU32.Z (BX), K1, z \
	ADDQ        R9, BX

#define STRIPROWS16 \
	STRIPROW(Z0) \
	STRIPROW(Z1) \
	STRIPROW(Z2) \
	STRIPROW(Z3) \
	STRIPROW(Z4) \
	STRIPROW(Z5) \
	STRIPROW(Z6) \
	STRIPROW(Z7) \
	STRIPROW(Z8) \
	STRIPROW(Z9) \
	STRIPROW(Z10) \
	STRIPROW(Z11) \
	STRIPROW(Z12) \
	STRIPROW(Z13) \
	STRIPROW(Z14) \
	VMOVDQU32.Z (BX), K1, Z15


// func PackBF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int)
TEXT ·PackBF16x32(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  rowBytes+16(FP), R9
	MOVQ  kpairs+24(FP), R10
	TESTQ R10, R10
	JLE   PackBF16x32done
	MOVQ  $2, R11 // row halves left: rows 0-15, then 16-31

PackBF16x32half:
	MOVQ R10, R13 // columns left

PackBF16x32cols:
	lanes(R13, K1)
	MOVQ R10, AX
	SUBQ R13, AX // this block's first column
	LEAQ (SI)(AX*4), BX
	IMULQ $256, AX
	LEAQ (DI)(AX*1), DX
	STRIPROWS16
	TRANSPOSE16
	MOVL         $0xffff0000, AX
	VPBROADCASTD AX, Z16
	MOVQ R13, CX // columns in this block: stores while c < CX
// BF16PAIR widens column z (a k pair of 16 rows) into panel rows k = 2p (DX) and 2p+1.
#define BF16PAIR(z) \
	VPSLLD  $16, z, Z17 \
	VPANDD  Z16, z, Z18 \
	VMOVUPS Z17, (DX) \
	VMOVUPS Z18, 128(DX)

#define BF16COL(z, n) \
	BF16PAIR(z) \
	CMPQ CX, $n \
	JLE  PackBF16x32next \
	ADDQ $256, DX
	BF16COL(Z0, 1)
	BF16COL(Z1, 2)
	BF16COL(Z2, 3)
	BF16COL(Z3, 4)
	BF16COL(Z4, 5)
	BF16COL(Z5, 6)
	BF16COL(Z6, 7)
	BF16COL(Z7, 8)
	BF16COL(Z8, 9)
	BF16COL(Z9, 10)
	BF16COL(Z10, 11)
	BF16COL(Z11, 12)
	BF16COL(Z12, 13)
	BF16COL(Z13, 14)
	BF16COL(Z14, 15)
	BF16PAIR(Z15)

PackBF16x32next:
	SUBQ $16, R13
	JG   PackBF16x32cols
	MOVQ R9, AX
	SHLQ $4, AX
	ADDQ AX, SI // rows 16-31
	ADDQ $64, DI
	DECQ R11
	JNZ  PackBF16x32half

PackBF16x32done:
	VZEROUPPER
	RET

// func PackF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int)
TEXT ·PackF16x32(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  rowBytes+16(FP), R9
	MOVQ  kpairs+24(FP), R10
	TESTQ R10, R10
	JLE   PackF16x32done
	MOVQ  $2, R11 // row halves left: rows 0-15, then 16-31

PackF16x32half:
	MOVQ R10, R13 // columns left

PackF16x32cols:
	lanes(R13, K1)
	MOVQ R10, AX
	SUBQ R13, AX // this block's first column
	LEAQ (SI)(AX*4), BX
	IMULQ $256, AX
	LEAQ (DI)(AX*1), DX
	STRIPROWS16
	TRANSPOSE16
	MOVQ R13, CX // columns in this block: stores while c < CX
// F16PAIR widens column z (a k pair of 16 rows, IEEE halves) into panel rows 2p and 2p+1.
#define F16PAIR(z) \
	VPMOVDW   z, Y17 \
	VCVTPH2PS Y17, Z17 \
	VPSRLD    $16, z, Z18 \
	VPMOVDW   Z18, Y18 \
	VCVTPH2PS Y18, Z18 \
	VMOVUPS   Z17, (DX) \
	VMOVUPS   Z18, 128(DX)

#define F16COL(z, n) \
	F16PAIR(z) \
	CMPQ CX, $n \
	JLE  PackF16x32next \
	ADDQ $256, DX
	F16COL(Z0, 1)
	F16COL(Z1, 2)
	F16COL(Z2, 3)
	F16COL(Z3, 4)
	F16COL(Z4, 5)
	F16COL(Z5, 6)
	F16COL(Z6, 7)
	F16COL(Z7, 8)
	F16COL(Z8, 9)
	F16COL(Z9, 10)
	F16COL(Z10, 11)
	F16COL(Z11, 12)
	F16COL(Z12, 13)
	F16COL(Z13, 14)
	F16COL(Z14, 15)
	F16PAIR(Z15)

PackF16x32next:
	SUBQ $16, R13
	JG   PackF16x32cols
	MOVQ R9, AX
	SHLQ $4, AX
	ADDQ AX, SI // rows 16-31
	ADDQ $64, DI
	DECQ R11
	JNZ  PackF16x32half

PackF16x32done:
	VZEROUPPER
	RET

// func RopeHalves(x *float32, cos *float32, sin *float32, half int)
// One head in place, HALVES: for i < half, with a = x[i], b = x[i+half]:
// x[i] = a*cos[i] - b*sin[i], x[i+half] = b*cos[i+half] + a*sin[i+half], every product
// rounded before the add (VMULPS, then VSUBPS / VADDPS: the bits of engine/cpu's ropeHead).
TEXT ·RopeHalves(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ cos+8(FP), R8
	MOVQ sin+16(FP), R9
	MOVQ half+24(FP), CX
	LEAQ (SI)(CX*4), DI  // x[half:]
	LEAQ (R8)(CX*4), R10 // cos[half:]
	LEAQ (R9)(CX*4), R11 // sin[half:]
	XORQ DX, DX

rloop:
	MOVQ CX, AX
	SUBQ DX, AX
	JLE  rdone
	CMPQ AX, $16
	JGE  rfull
	MOVL $1, BX
	SHLXL AX, BX, BX
	DECL BX
	KMOVW BX, K1
	JMP  rgo

rfull:
	KXNORW K1, K1, K1

rgo:
	VMOVUPS.Z (SI)(DX*4), K1, Z0  // a
	VMOVUPS.Z (DI)(DX*4), K1, Z1  // b
	VMOVUPS.Z (R8)(DX*4), K1, Z2  // cos lo
	VMOVUPS.Z (R9)(DX*4), K1, Z3  // sin lo
	VMOVUPS.Z (R10)(DX*4), K1, Z4 // cos hi
	VMOVUPS.Z (R11)(DX*4), K1, Z5 // sin hi
	VMULPS  Z2, Z0, Z6 // a*cl
	VMULPS  Z3, Z1, Z7 // b*sl
	VSUBPS  Z7, Z6, Z6
	VMULPS  Z4, Z1, Z8 // b*ch
	VMULPS  Z5, Z0, Z9 // a*sh
	VADDPS  Z9, Z8, Z8
	VMOVUPS Z6, K1, (SI)(DX*4)
	VMOVUPS Z8, K1, (DI)(DX*4)
	ADDQ    $16, DX
	JMP     rloop

rdone:
	VZEROUPPER
	RET
