// softmax_amd64.s: the AVX-512 pieces of the online softmax in engine/cpu's flash attention,
// and the vector GELU.
//
// Invariant: the results depend only on the values, never on the caller's tiling: each element
// is handled by the same instructions whatever lane it falls in (GELUTanh's masked tail runs the
// full-vector code), the max is exact (order does not matter), and ColExpSum adds each column
// in float64 in row order, a lane per column, nothing summed across lanes.
// Numerics: exp(x) for x <= ~0 as 2^n * P(r), n = round(x*log2e), r = x - n*ln2 with ln2 split
// in two (Cody-Waite, both steps fused), P the degree-7 Taylor polynomial of e^r on |r| <= ln2/2
// (truncation < 6e-9 relative), 2^n applied by VSCALEFPS (which rounds an underflow to the
// subnormal or 0 correctly); within 2 ulp of float32(exp(x)) (TestExpSum). x is clamped below at
// -104 (exp(-104) rounds to 0) with the NaN kept: a NaN score stays NaN, so a NaN weight still
// reaches the output where the engine names it.
// Mutation that would silently break it: ColExpSum subtracting one max (lanes 0-15's) from both
// halves of a row: the upper 16 queries of every block would get a wrong softmax that still
// sums to a plausible number.

#include "textflag.h"

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

// expzm: x = exp(x - m), constants in Z17-Z28, n, r and p clobbered: expz's instructions in
// the same order on registers named by the caller, inline, so that ColExpSum runs a row's two
// halves as independent chains without a call each (the same bits as expz).
#define expzm(x, m, n, r, p) \
	VSUBPS       m, x, x \
	VMAXPS       x, Z17, x \
	VMINPS       x, Z28, x \
	VMULPS       Z18, x, n \
	VRNDSCALEPS  $0, n, n \
	VMOVAPS      x, r \
	VFNMADD231PS Z19, n, r \
	VFNMADD231PS Z20, n, r \
	VMOVAPS      Z21, p \
	VFMADD213PS  Z22, r, p \
	VFMADD213PS  Z23, r, p \
	VFMADD213PS  Z24, r, p \
	VFMADD213PS  Z25, r, p \
	VFMADD213PS  Z26, r, p \
	VFMADD213PS  Z27, r, p \
	VFMADD213PS  Z27, r, p \
	VSCALEFPS    n, p, x

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

// The column forms, for a score tile laid out [key][32 queries] (lanes = queries): every
// reduction runs down the keys, lane by lane, so nothing is summed across lanes and a lane's
// result depends only on its own column.

// func ColScaleMax(s *float32, rows int, scale float32, m *[32]float32)
// s[r*32+q] *= scale for r < rows; m[q] = max over r of the scaled s[r*32+q] (-Inf for rows 0).
TEXT ·ColScaleMax(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         rows+8(FP), CX
	VBROADCASTSS scale+16(FP), Z2
	MOVQ         m+24(FP), DI
	MOVL         $0xff800000, AX
	VPBROADCASTD AX, Z0
	VMOVAPS      Z0, Z1

cmloop:
	TESTQ   CX, CX
	JZ      cmdone
	VMULPS  (SI), Z2, Z3
	VMULPS  64(SI), Z2, Z4
	VMOVUPS Z3, (SI)
	VMOVUPS Z4, 64(SI)
	VMAXPS  Z3, Z0, Z0
	VMAXPS  Z4, Z1, Z1
	ADDQ    $128, SI
	DECQ    CX
	JMP     cmloop

cmdone:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VZEROUPPER
	RET

// func ColExpSum(s *float32, rows int, m *[32]float32, sum *[32]float64)
// s[r*32+q] = exp(s[r*32+q] - m[q]) for r < rows; sum[q] += the float64 sum of column q, in
// row order.
TEXT ·ColExpSum(SB), NOSPLIT, $0-32
	MOVQ    s+0(FP), SI
	MOVQ    rows+8(FP), CX
	MOVQ    m+16(FP), R8
	MOVQ    sum+24(FP), DI
	expConsts
	VMOVUPS (R8), Z8  // m, lanes 0-15
	VMOVUPS 64(R8), Z9 // m, lanes 16-31
	VMOVUPD (DI), Z10  // sums of lanes 0-7
	VMOVUPD 64(DI), Z11
	VMOVUPD 128(DI), Z12
	VMOVUPD 192(DI), Z13

celoop:
	TESTQ         CX, CX
	JZ            cedone
	VMOVUPS       (SI), Z2
	VMOVUPS       64(SI), Z3
	expzm(Z2, Z8, Z5, Z6, Z7)
	expzm(Z3, Z9, Z14, Z15, Z0)
	VMOVUPS       Z2, (SI)
	VMOVUPS       Z3, 64(SI)
	VCVTPS2PD     Y2, Z4
	VADDPD        Z4, Z10, Z10
	VEXTRACTF64X4 $1, Z2, Y4
	VCVTPS2PD     Y4, Z4
	VADDPD        Z4, Z11, Z11
	VCVTPS2PD     Y3, Z1
	VADDPD        Z1, Z12, Z12
	VEXTRACTF64X4 $1, Z3, Y1
	VCVTPS2PD     Y1, Z1
	VADDPD        Z1, Z13, Z13
	ADDQ          $128, SI
	DECQ          CX
	JMP           celoop

cedone:
	VMOVUPD Z10, (DI)
	VMOVUPD Z11, 64(DI)
	VMOVUPD Z12, 128(DI)
	VMOVUPD Z13, 192(DI)
	VZEROUPPER
	RET

// func ColScale(o *float32, rows int, a *[32]float32)
// o[r*32+q] *= a[q] for r < rows.
TEXT ·ColScale(SB), NOSPLIT, $0-24
	MOVQ    o+0(FP), SI
	MOVQ    rows+8(FP), CX
	MOVQ    a+16(FP), DI
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1

csloop:
	TESTQ   CX, CX
	JZ      csdone
	VMULPS  (SI), Z0, Z2
	VMULPS  64(SI), Z1, Z3
	VMOVUPS Z2, (SI)
	VMOVUPS Z3, 64(SI)
	ADDQ    $128, SI
	DECQ    CX
	JMP     csloop

csdone:
	VZEROUPPER
	RET
