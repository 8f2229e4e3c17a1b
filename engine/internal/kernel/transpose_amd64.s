// transpose_amd64.s: the flash attention's transposes with AVX-512 gathers (engine/cpu's
// packQT and packVT, and the output's O^T / l), 16 source rows per gather.
//
// Invariant: GatherT writes dst[j*ldd + i] = src[i*lds + j] and DivGatherT writes
// out[c*ldo + d] = float32(float64(ob[d*32 + c]) / sum[c]), each element exactly the scalar
// loop's value (a copy; the float64 quotient correctly rounded, then rounded to float32 to
// nearest even, as Go's conversion does), for the rows and columns asked and nothing else:
// a short block's lanes are masked off on both the gather (no read) and the store (no write).
// Mutation that would silently break it: storing a short block's 16 lanes unmasked: the lanes
// past the last row write a gather's stale values over the next query's output, or past the
// end of the packed V^T row into its padding (TestGatherT, TestDivGatherT check every element
// beside the block too).

#include "textflag.h"

DATA idx16<>+0(SB)/4, $0
DATA idx16<>+4(SB)/4, $1
DATA idx16<>+8(SB)/4, $2
DATA idx16<>+12(SB)/4, $3
DATA idx16<>+16(SB)/4, $4
DATA idx16<>+20(SB)/4, $5
DATA idx16<>+24(SB)/4, $6
DATA idx16<>+28(SB)/4, $7
DATA idx16<>+32(SB)/4, $8
DATA idx16<>+36(SB)/4, $9
DATA idx16<>+40(SB)/4, $10
DATA idx16<>+44(SB)/4, $11
DATA idx16<>+48(SB)/4, $12
DATA idx16<>+52(SB)/4, $13
DATA idx16<>+56(SB)/4, $14
DATA idx16<>+60(SB)/4, $15
GLOBL idx16<>(SB), RODATA|NOPTR, $64

// lanes sets K2 to the low min(16, n) bits (n > 0 in reg), clobbering AX and CX.
#define lanes(reg) \
	MOVQ    reg, CX \
	MOVL    $16, AX \
	CMPQ    CX, AX \
	CMOVQGT AX, CX \
	MOVL    $1, AX \
	SHLL    CX, AX \
	DECL    AX \
	KMOVW   AX, K2

// func GatherT(dst *float32, ldd int, src *float32, lds int, rows, cols int)
TEXT ·GatherT(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         ldd+8(FP), R8
	MOVQ         src+16(FP), SI
	MOVQ         lds+24(FP), R9
	MOVQ         rows+32(FP), R10
	MOVQ         cols+40(FP), R11
	TESTQ        R10, R10
	JLE          tdone
	TESTQ        R11, R11
	JLE          tdone
	VPBROADCASTD R9, Z31
	VPMULLD      idx16<>(SB), Z31, Z31 // element offsets of rows 0..15
	SHLQ         $2, R8                // ldd in bytes
	SHLQ         $6, R9                // 16 source rows in bytes

trows:
	lanes(R10)
	MOVQ SI, BX  // column j of these rows
	MOVQ DI, DX  // dst row j, from element i
	MOVQ R11, R12

tcol:
	KMOVW      K2, K1
	VGATHERDPS (BX)(Z31*4), K1, Z0
	VMOVUPS    Z0, K2, (DX)
	ADDQ       $4, BX
	ADDQ       R8, DX
	DECQ       R12
	JNZ        tcol
	ADDQ       R9, SI
	ADDQ       $64, DI
	SUBQ       $16, R10
	JG         trows

tdone:
	VZEROUPPER
	RET

// func DivGatherT(out *float32, ldo int, ob *float32, sum *float64, n, hd int)
TEXT ·DivGatherT(SB), NOSPLIT, $0-48
	MOVQ         out+0(FP), DI
	MOVQ         ldo+8(FP), R8
	MOVQ         ob+16(FP), SI
	MOVQ         sum+24(FP), R13
	MOVQ         n+32(FP), R10
	MOVQ         hd+40(FP), R11
	TESTQ        R10, R10
	JLE          ddone
	TESTQ        R11, R11
	JLE          ddone
	MOVL         $32, AX
	VPBROADCASTD AX, Z31
	VPMULLD      idx16<>(SB), Z31, Z31 // element offsets of O^T rows d..d+15
	SHLQ         $2, R8                // ldo in bytes

dquery:
	VBROADCASTSD (R13), Z30 // this column's sum l
	MOVQ         SI, BX     // O^T column c, row d
	MOVQ         DI, DX     // output row c, element d
	MOVQ         R11, R12

ddims:
	lanes(R12)
	KMOVW         K2, K1
	VGATHERDPS    (BX)(Z31*4), K1, Z0
	VCVTPS2PD     Y0, Z1
	VEXTRACTF64X4 $1, Z0, Y2
	VCVTPS2PD     Y2, Z2
	VDIVPD        Z30, Z1, Z1
	VDIVPD        Z30, Z2, Z2
	VCVTPD2PS     Z1, Y1
	VCVTPD2PS     Z2, Y2
	VINSERTF64X4  $1, Y2, Z1, Z1
	VMOVUPS       Z1, K2, (DX)
	ADDQ          $2048, BX // 16 O^T rows of 32 floats
	ADDQ          $64, DX
	SUBQ          $16, R12
	JG            ddims
	ADDQ          $4, SI
	ADDQ          R8, DI
	ADDQ          $8, R13
	DECQ          R10
	JNZ           dquery

ddone:
	VZEROUPPER
	RET
