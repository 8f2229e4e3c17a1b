// softmax_amd64.s: the AVX-512 pieces of the online softmax in engine/cpu's flash attention.
//
// Invariant: the results depend only on the values and n, never on the caller's tiling: each
// element is handled by the same instructions whatever lane it falls in (the masked tail runs
// the full-vector code with the missing lanes zeroed and left out of the max and the sum), the
// max is exact (order does not matter), and ExpSum adds in float64 into 16 lane sums that are
// folded in one fixed order at the end.
// Numerics: exp(x) for x <= ~0 as 2^n * P(r), n = round(x*log2e), r = x - n*ln2 with ln2 split
// in two (Cody-Waite, both steps fused), P the degree-7 Taylor polynomial of e^r on |r| <= ln2/2
// (truncation < 6e-9 relative), 2^n applied by VSCALEFPS (which rounds an underflow to the
// subnormal or 0 correctly); within 2 ulp of float32(exp(x)) (TestExpSum). x is clamped below at
// -104 (exp(-104) rounds to 0) with the NaN kept: a NaN score stays NaN, so a NaN weight still
// reaches the output where the engine names it.
// Mutation that would silently break it: adding the masked-off tail lanes into the sum (their
// exp(0 - m) is not 0): rows whose length is not a multiple of 16 would get a larger sum.

#include "textflag.h"

// func ScaleMax(s *float32, n int, scale float32) float32
// s[i] *= scale for i < n; returns max(s[0:n]) after scaling (-Inf for n == 0).
TEXT ·ScaleMax(SB), NOSPLIT, $0-28
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Z1
	MOVL         $0xff800000, AX // -Inf
	VPBROADCASTD AX, Z0
	VMOVAPS      Z0, Z3

loop16:
	CMPQ    CX, $16
	JLT     tail
	VMULPS  (SI), Z1, Z2
	VMOVUPS Z2, (SI)
	VMAXPS  Z2, Z0, Z0
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     loop16

tail:
	TESTQ   CX, CX
	JZ      fold
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1
	VMOVUPS.Z (SI), K1, Z2
	VMULPS  Z2, Z1, Z2
	VMOVUPS Z2, K1, (SI)
	VMOVAPS Z3, Z4
	VMOVAPS Z2, K1, Z4 // -Inf in the missing lanes
	VMAXPS  Z4, Z0, Z0

fold: // max of the 16 lanes
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXSS        X1, X0, X0
	VMOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// expConsts loads expz's constants: -104, log2(e), ln2 in a high part (exact times any n
// here) and a low part, the Taylor coefficients 1/5040 ... 1/2, 1, and +104 into Z17-Z28 (AX clobbered).
#define expConsts \
	MOVL         $0xc2d00000, AX \
	VPBROADCASTD AX, Z17 \
	MOVL         $0x3fb8aa3b, AX \
	VPBROADCASTD AX, Z18 \
	MOVL         $0x3f317200, AX \
	VPBROADCASTD AX, Z19 \
	MOVL         $0x35bfbe8e, AX \
	VPBROADCASTD AX, Z20 \
	MOVL         $0x39500d01, AX \
	VPBROADCASTD AX, Z21 \
	MOVL         $0x3ab60b61, AX \
	VPBROADCASTD AX, Z22 \
	MOVL         $0x3c088889, AX \
	VPBROADCASTD AX, Z23 \
	MOVL         $0x3d2aaaab, AX \
	VPBROADCASTD AX, Z24 \
	MOVL         $0x3e2aaaab, AX \
	VPBROADCASTD AX, Z25 \
	MOVL         $0x3f000000, AX \
	VPBROADCASTD AX, Z26 \
	MOVL         $0x3f800000, AX \
	VPBROADCASTD AX, Z27 \
	MOVL         $0x42d00000, AX \
	VPBROADCASTD AX, Z28

// func ExpSum(s *float32, n int, m float32) float64
// s[i] = exp(s[i] - m) for i < n; returns the float64 sum of the new s[0:n].
// Registers: Z16-Z23 constants, Z0/Z1 the float64 lane sums, Z2-Z7 work.
TEXT ·ExpSum(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Z16
	expConsts
	VPXORQ       Z0, Z0, Z0
	VPXORQ       Z1, Z1, Z1

loop16:
	CMPQ    CX, $16
	JLT     tail
	VMOVUPS (SI), Z2
	CALL    expz<>(SB)
	VMOVUPS Z2, (SI)
	VCVTPS2PD Y2, Z3
	VADDPD  Z3, Z0, Z0
	VEXTRACTF64X4 $1, Z2, Y4
	VCVTPS2PD Y4, Z3
	VADDPD  Z3, Z1, Z1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     loop16

tail:
	TESTQ   CX, CX
	JZ      fold
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1
	VMOVUPS.Z (SI), K1, Z2
	CALL    expz<>(SB)
	VMOVUPS Z2, K1, (SI)
	VMOVAPS.Z Z2, K1, Z2 // the missing lanes add 0
	VCVTPS2PD Y2, Z3
	VADDPD  Z3, Z0, Z0
	VEXTRACTF64X4 $1, Z2, Y4
	VCVTPS2PD Y4, Z3
	VADDPD  Z3, Z1, Z1

fold: // (lanes 0-7 + lanes 8-15), then halves, in one fixed order
	VADDPD        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VADDSD        X1, X0, X0
	VMOVSD        X0, ret+24(FP)
	VZEROUPPER
	RET

// expz: Z2 = exp(Z2 - Z16), constants in Z17-Z28; clobbers Z5-Z7.
TEXT expz<>(SB), NOSPLIT|NOFRAME, $0-0
	VSUBPS      Z16, Z2, Z2
	VMAXPS      Z2, Z17, Z2 // clamp at -104; a NaN in Z2 (the second source) is kept
	VMINPS      Z2, Z28, Z2 // and at +104 (exp overflows to +Inf), NaN kept
	VMULPS      Z18, Z2, Z5
	VRNDSCALEPS $0, Z5, Z5 // n = round(x*log2e), ties to even
	VMOVAPS     Z2, Z6
	VFNMADD231PS Z19, Z5, Z6 // r = x - n*ln2hi
	VFNMADD231PS Z20, Z5, Z6 // r -= n*ln2lo
	VMOVAPS     Z21, Z7
	VFMADD213PS Z22, Z6, Z7 // p = p*r + c
	VFMADD213PS Z23, Z6, Z7
	VFMADD213PS Z24, Z6, Z7
	VFMADD213PS Z25, Z6, Z7
	VFMADD213PS Z26, Z6, Z7
	VFMADD213PS Z27, Z6, Z7
	VFMADD213PS Z27, Z6, Z7
	VSCALEFPS   Z5, Z7, Z2 // p * 2^n
	RET

// geluz: Z2 = gelu_tanh(Z8), Z8 kept, as x*sigmoid(2u) with e = exp(-2|u|): x/(1+e) for
// u >= 0 and x*e/(1+e) for u < 0, so nothing overflows and the far negative tail reaches the
// subnormals instead of -0. Constants in Z16 (0), Z17-Z31; clobbers Z5-Z9, K2.
#define geluz \
	VMULPS       Z8, Z8, Z9 \
	VMULPS       Z8, Z9, Z9 \
	VFMADD132PS  Z29, Z8, Z9 \
	VPANDD       Z31, Z9, Z2 \
	VMULPS       Z30, Z2, Z2 \
	CALL         expz<>(SB) \
	VMOVAPS      Z8, Z5 \
	VCMPPS       $1, Z16, Z9, K2 \
	VMULPS       Z2, Z8, K2, Z5 \
	VADDPS       Z27, Z2, Z2 \
	VDIVPS       Z2, Z5, Z2

// func GELUTanh(x *float32, n int)
// x[i] = gelu_tanh(x[i]) for i < n, u = sqrt(2/pi)(x + 0.044715x^3), through geluz: the same
// function as 0.5x(1 + tanh(u)) without its cancellation for negative x.
TEXT ·GELUTanh(SB), NOSPLIT, $0-16
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	expConsts
	VPXORD       Z16, Z16, Z16 // expz subtracts 0
	MOVL         $0x3d372713, AX // 0.044715
	VPBROADCASTD AX, Z29
	MOVL         $0xbfcc422a, AX // -2*sqrt(2/pi)
	VPBROADCASTD AX, Z30
	MOVL         $0x7fffffff, AX // |.|
	VPBROADCASTD AX, Z31

gloop:
	CMPQ    CX, $16
	JLT     gtail
	VMOVUPS (SI), Z8
	geluz
	VMOVUPS Z2, (SI)
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     gloop

gtail:
	TESTQ   CX, CX
	JZ      gdone
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1
	VMOVUPS.Z (SI), K1, Z8
	geluz
	VMOVUPS Z2, K1, (SI)

gdone:
	VZEROUPPER
	RET
