// add_amd64.s: rows of float32 added in place, 16 lanes at a time (AVX-512), for engine/cpu's
// bias and residual adds in a matrix product's epilogue and Backend.Add.
//
// Invariant: each element is one float32 addition dst + src, rounded once, exactly what the
// scalar loop it replaces computes (the masked tail too): the same bits, in any lane.
// Mutation that would silently break it: advancing src by ld instead of lds (the bias row,
// lds 0, would be read from the rows after it).

#include "textflag.h"

// func AddRows(dst *float32, ld int, src *float32, lds int, rows int, n int)
TEXT ·AddRows(SB), NOSPLIT, $0-48
	MOVQ  dst+0(FP), DI
	MOVQ  ld+8(FP), R8
	MOVQ  src+16(FP), SI
	MOVQ  lds+24(FP), R9
	MOVQ  rows+32(FP), R10
	MOVQ  n+40(FP), R11
	SHLQ  $2, R8
	SHLQ  $2, R9
	MOVQ  R11, CX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1 // the tail's lanes
	SHRQ  $4, R11 // whole vectors a row

arow:
	TESTQ R10, R10
	JZ    adone
	MOVQ  DI, BX
	MOVQ  SI, DX
	MOVQ  R11, CX

avec:
	TESTQ   CX, CX
	JZ      atail
	VMOVUPS (BX), Z0
	VADDPS  (DX), Z0, Z0
	VMOVUPS Z0, (BX)
	ADDQ    $64, BX
	ADDQ    $64, DX
	DECQ    CX
	JMP     avec

atail:
	KORTESTW  K1, K1
	JZ        anext
	VMOVUPS.Z (BX), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (BX)

anext:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ R10
	JMP  arow

adone:
	VZEROUPPER
	RET
