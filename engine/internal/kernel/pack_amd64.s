// pack_amd64.s: widening a strip of 32 weight rows into FMA6x32's k-major panel with AVX-512
// gathers (engine/cpu's packPanel, the aligned-or-not BF16 and F32 cases).
//
// Invariant: dst[k*32 + j] = float32(W[j, k]) exactly (BF16: the 16 bits moved up, nothing
// rounded), for j < 32 and every k asked: the same values as the scalar packers, so the
// packer never changes a product's bits (engine/cpu's TestPackStripFastMatchesGeneric).
// Mutation that would silently break it: taking the k+1 half of a BF16 pair from the low 16
// bits (swapping k and k+1): every product then pairs x[k] with W[k+1], and only a test that
// compares packed values (not the sums' tolerance) is sure to see it.

#include "textflag.h"

DATA rowIdx<>+0(SB)/4, $0
DATA rowIdx<>+4(SB)/4, $1
DATA rowIdx<>+8(SB)/4, $2
DATA rowIdx<>+12(SB)/4, $3
DATA rowIdx<>+16(SB)/4, $4
DATA rowIdx<>+20(SB)/4, $5
DATA rowIdx<>+24(SB)/4, $6
DATA rowIdx<>+28(SB)/4, $7
DATA rowIdx<>+32(SB)/4, $8
DATA rowIdx<>+36(SB)/4, $9
DATA rowIdx<>+40(SB)/4, $10
DATA rowIdx<>+44(SB)/4, $11
DATA rowIdx<>+48(SB)/4, $12
DATA rowIdx<>+52(SB)/4, $13
DATA rowIdx<>+56(SB)/4, $14
DATA rowIdx<>+60(SB)/4, $15
GLOBL rowIdx<>(SB), RODATA|NOPTR, $64

// stripArgs loads a packer's arguments: DI the panel, SI row 0, CX the count (k pairs or k),
// Z1 the byte offsets of rows 0..15 (as int32), R8 row 16.
#define stripArgs(count) \
	MOVQ         dst+0(FP), DI \
	MOVQ         src+8(FP), SI \
	MOVQ         rowBytes+16(FP), AX \
	MOVQ         count+24(FP), CX \
	VPBROADCASTD AX, Z1 \
	VPMULLD      rowIdx<>(SB), Z1, Z1 \
	MOVQ         AX, BX \
	SHLQ         $4, BX \
	LEAQ         (SI)(BX*1), R8

// func PackBF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int)
// Rows j = 0..31 of the strip start at src + j*rowBytes; k pairs (2p, 2p+1) are read as one
// dword per row (little-endian: element 2p in the low half). 32*rowBytes must fit in int32.
TEXT ·PackBF16x32(SB), NOSPLIT, $0-32
	stripArgs(kpairs) // rows 0..15 at SI + Z1, rows 16..31 at R8 + Z1
	MOVL         $0xffff0000, DX
	VPBROADCASTD DX, Z7

bloop:
	TESTQ       CX, CX
	JZ          bdone
	KXNORW      K1, K1, K1
	VPGATHERDD  (SI)(Z1*1), K1, Z2
	KXNORW      K2, K2, K2
	VPGATHERDD  (R8)(Z1*1), K2, Z3
	VPSLLD      $16, Z2, Z4
	VPSLLD      $16, Z3, Z5
	VPANDD      Z7, Z2, Z2
	VPANDD      Z7, Z3, Z3
	VMOVUPS     Z4, 0(DI)
	VMOVUPS     Z5, 64(DI)
	VMOVUPS     Z2, 128(DI)
	VMOVUPS     Z3, 192(DI)
	ADDQ        $4, SI
	ADDQ        $4, R8
	ADDQ        $256, DI
	DECQ        CX
	JMP         bloop

bdone:
	VZEROUPPER
	RET

// func PackF32x32(dst *float32, src unsafe.Pointer, rowBytes int, kn int)
TEXT ·PackF32x32(SB), NOSPLIT, $0-32
	stripArgs(kn) // rows 0..15 at SI + Z1, rows 16..31 at R8 + Z1

floop:
	TESTQ       CX, CX
	JZ          fdone
	KXNORW      K1, K1, K1
	VPGATHERDD  (SI)(Z1*1), K1, Z2
	KXNORW      K2, K2, K2
	VPGATHERDD  (R8)(Z1*1), K2, Z3
	VMOVUPS     Z2, 0(DI)
	VMOVUPS     Z3, 64(DI)
	ADDQ        $4, SI
	ADDQ        $4, R8
	ADDQ        $128, DI
	DECQ        CX
	JMP         floop

fdone:
	VZEROUPPER
	RET

// func PackF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int)
// PackBF16x32 for IEEE half weights: each half of a gathered dword widened by VCVTPH2PS
// (exact, subnormals and Inf/NaN included).
TEXT ·PackF16x32(SB), NOSPLIT, $0-32
	stripArgs(kpairs) // rows 0..15 at SI + Z1, rows 16..31 at R8 + Z1

hloop:
	TESTQ       CX, CX
	JZ          hdone
	KXNORW      K1, K1, K1
	VPGATHERDD  (SI)(Z1*1), K1, Z2
	KXNORW      K2, K2, K2
	VPGATHERDD  (R8)(Z1*1), K2, Z3
	VPMOVDW     Z2, Y4 // the low halves (k), rows 0-15
	VPMOVDW     Z3, Y5
	VPSRLD      $16, Z2, Z2 // the high halves (k+1)
	VPSRLD      $16, Z3, Z3
	VPMOVDW     Z2, Y6
	VPMOVDW     Z3, Y7
	VCVTPH2PS   Y4, Z4
	VCVTPH2PS   Y5, Z5
	VCVTPH2PS   Y6, Z6
	VCVTPH2PS   Y7, Z7
	VMOVUPS     Z4, 0(DI)
	VMOVUPS     Z5, 64(DI)
	VMOVUPS     Z6, 128(DI)
	VMOVUPS     Z7, 192(DI)
	ADDQ        $4, SI
	ADDQ        $4, R8
	ADDQ        $256, DI
	DECQ        CX
	JMP         hloop

hdone:
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
