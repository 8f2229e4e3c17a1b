// norm_amd64.s: LayerNorm's three passes over a row, 16 floats at a time (AVX-512), for
// engine/cpu's LayerNorm; the row's tail (n mod 16) is the caller's, in scalar code.
//
// Invariant: the two sums are float64, each element widened exactly and added into one of two
// 8-lane float64 accumulators (elements 16c..16c+7 into the first, 16c+8..16c+15 into the
// second), folded once at the end in one fixed order; the squared deviation is rounded to
// float64 before it is added (VMULPD then VADDPD, never fused). The affine pass computes what
// the scalar row does, element by element: xn = float32((float64(x) - mean) * inv), then
// float32(xn * w) + b. So a row's bits depend on its values and length only.
// Mutation that would silently break it: VFMADD231PD for the sum of squares (d*d + acc in one
// rounding): parity holds, but the bits then differ from the rounded-product contract and from
// run to run of the same row on CPUs where the assembler's choice differs.

#include "textflag.h"

// fold8: X0 = the sum of Z0's 8 float64 lanes plus Z1's, in one fixed order.
#define fold8 \
	VADDPD        Z1, Z0, Z0 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPD        Y1, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VADDPD        X1, X0, X0 \
	VPERMILPD     $1, X0, X1 \
	VADDSD        X1, X0, X0

// func SumF64(x *float32, n16 int) float64
TEXT ·SumF64(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n16+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1

sloop:
	CMPQ      CX, $16
	JLT       sdone
	VCVTPS2PD (SI), Z2
	VCVTPS2PD 32(SI), Z3
	VADDPD    Z2, Z0, Z0
	VADDPD    Z3, Z1, Z1
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       sloop

sdone:
	fold8
	VMOVSD X0, ret+16(FP)
	VZEROUPPER
	RET

// func SumSqDevF64(x *float32, n16 int, mean float64) float64
TEXT ·SumSqDevF64(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n16+8(FP), CX
	VBROADCASTSD mean+16(FP), Z4
	VPXORQ       Z0, Z0, Z0
	VPXORQ       Z1, Z1, Z1

qloop:
	CMPQ      CX, $16
	JLT       qdone
	VCVTPS2PD (SI), Z2
	VCVTPS2PD 32(SI), Z3
	VSUBPD    Z4, Z2, Z2
	VSUBPD    Z4, Z3, Z3
	VMULPD    Z2, Z2, Z2
	VMULPD    Z3, Z3, Z3
	VADDPD    Z2, Z0, Z0
	VADDPD    Z3, Z1, Z1
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       qloop

qdone:
	fold8
	VMOVSD X0, ret+24(FP)
	VZEROUPPER
	RET

// func NormAffine(out, x, w, b *float32, n16 int, mean, inv float64)
// out may be x itself (each chunk is read before it is written).
TEXT ·NormAffine(SB), NOSPLIT, $0-56
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), R8
	MOVQ         b+24(FP), R9
	MOVQ         n16+32(FP), CX
	VBROADCASTSD mean+40(FP), Z4
	VBROADCASTSD inv+48(FP), Z5

aloop:
	CMPQ      CX, $16
	JLT       adone
	VCVTPS2PD (SI), Z2
	VCVTPS2PD 32(SI), Z3
	VSUBPD    Z4, Z2, Z2
	VSUBPD    Z4, Z3, Z3
	VMULPD    Z5, Z2, Z2
	VMULPD    Z5, Z3, Z3
	VCVTPD2PS Z2, Y2
	VCVTPD2PS Z3, Y3
	VINSERTF64X4 $1, Y3, Z2, Z2
	VMULPS    (R8), Z2, Z2
	VADDPS    (R9), Z2, Z2
	VMOVUPS   Z2, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $64, R8
	ADDQ      $64, R9
	SUBQ      $16, CX
	JMP       aloop

adone:
	VZEROUPPER
	RET
