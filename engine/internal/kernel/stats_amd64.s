// stats_amd64.s: one row's statistics sums in float64 (AVX-512), for engine/probe's per-patch
// statistics after every block.
//
// Invariant: each sum runs in 8 float64 lanes (lane l takes elements l, l+8, l+16, ... in
// order, a masked tail adding zeros) and the lanes are added in one fixed order at the end, so a
// row's result depends on its values alone, never on the thread that takes it; each value is
// widened exactly and each product rounded before its add, as the scalar loop does. max |x| is
// exact in any order and skips NaN (the caller makes a NaN row's max NaN unless it holds +Inf,
// as before). Differs from the scalar loop's index order in the float64 sums' last bits only.
// Mutation that would silently break it: a tail loaded without its mask (the row's next values,
// another patch's, added in).

#include "textflag.h"

// rowbody: Y6 = 8 x values, Y7 = 8 in values, into Z0 (ss), Z1 (sum), Z2 (diff), Z3 (inSS),
// Y4 (max |x|); Y5 the abs mask.
#define rowbody \
	VANDPS    Y5, Y6, Y8 \
	VMAXPS    Y4, Y8, Y4 \
	VCVTPS2PD Y6, Z9 \
	VCVTPS2PD Y7, Z10 \
	VMULPD    Z9, Z9, Z11 \
	VADDPD    Z11, Z0, Z0 \
	VADDPD    Z9, Z1, Z1 \
	VSUBPD    Z10, Z9, Z12 \
	VMULPD    Z12, Z12, Z12 \
	VADDPD    Z12, Z2, Z2 \
	VMULPD    Z10, Z10, Z13 \
	VADDPD    Z13, Z3, Z3

// hsum: the 8 lanes of Z(r) added in a fixed order (l + l+4, then + l+2, then + l+1) into
// X(r)'s low double, stored at off(DX).
#define hsum(z, y, x, off) \
	VEXTRACTF64X4 $1, z, Y14 \
	VADDPD        Y14, y, y \
	VEXTRACTF128  $1, y, X14 \
	VADDPD        X14, x, x \
	VUNPCKHPD     x, x, X14 \
	VADDSD        X14, x, x \
	VMOVSD        x, off(DX)

// func RowSumsF64(x, in *float32, n int, s *[5]float64)
// s = {sum x^2, sum x, sum (x-in)^2, sum in^2, max |x| (NaN skipped)} over n values.
TEXT ·RowSumsF64(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         in+8(FP), DI
	MOVQ         n+16(FP), CX
	MOVQ         s+24(FP), DX
	VXORPD       Z0, Z0, Z0
	VXORPD       Z1, Z1, Z1
	VXORPD       Z2, Z2, Z2
	VXORPD       Z3, Z3, Z3
	VXORPS       Y4, Y4, Y4
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Y5

rloop:
	CMPQ    CX, $8
	JLT     rtail
	VMOVUPS (SI), Y6
	VMOVUPS (DI), Y7
	rowbody
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     rloop

rtail:
	TESTQ     CX, CX
	JZ        rdone
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Y6
	VMOVUPS.Z (DI), K1, Y7
	rowbody

rdone:
	hsum(Z0, Y0, X0, 0)
	hsum(Z1, Y1, X1, 8)
	hsum(Z2, Y2, X2, 16)
	hsum(Z3, Y3, X3, 24)
	VEXTRACTF128 $1, Y4, X14 // max |x|: order does not matter
	VMAXPS       X14, X4, X4
	VPERMILPS    $0x4e, X4, X14
	VMAXPS       X14, X4, X4
	VPERMILPS    $0xb1, X4, X14
	VMAXPS       X14, X4, X4
	VCVTSS2SD    X4, X4, X4
	VMOVSD       X4, 32(DX)
	VZEROUPPER
	RET
