// transpose_amd64.s: the flash attention's transposes (engine/cpu's packQT and packVT, and
// the output's O^T / l) in 16 x 16 blocks: 16 rows loaded, transposed in registers (unpack
// ps, unpack pd, two rounds of 128-bit shuffles: 64 shuffles a block), stored as 16 columns.
// Measured against AVX-512 gathers of 16 rows a column, the first version: on AMD Zen 5 the
// gathers were no faster than the scalar copy.
//
// Invariant: Transpose writes dst[j*ldd + i] = src[i*lds + j] and DivTranspose writes
// out[c*ldo + d] = float32(float64(ob[d*32 + c]) / sum[c]), each element exactly the scalar
// loop's value (a copy; the float64 quotient correctly rounded, then rounded to float32 to
// nearest even, as Go's conversion does), for the rows and columns asked and nothing else: a
// short block's columns are masked off on the load (no read past the row) and its rows on the
// store (no write past them); its missing rows repeat the last one, never read past it.
// Mutation that would silently break it: storing a short block's 16 lanes unmasked: the lanes
// past the last row write another row's values over the next query's output, or past the end
// of the packed V^T row into its padding (TestTranspose, TestDivTranspose check every element
// beside the block too).

#include "textflag.h"

// lanes sets k to the low min(16, reg) bits (reg > 0), clobbering AX and CX.
#define lanes(reg, k) \
	MOVQ    reg, CX \
	MOVL    $16, AX \
	CMPQ    CX, AX \
	CMOVQGT AX, CX \
	MOVL    $1, AX \
	SHLL    CX, AX \
	DECL    AX \
	KMOVW   AX, k

// func Transpose(dst *float32, ldd int, src *float32, lds int, rows, cols int)
// Blocks of 16 source rows (i) x 16 columns (j): the rows loaded (columns past cols masked
// off, rows past rows repeating the last), transposed in registers, and the block's columns
// stored as dst rows, the lanes past rows masked off.
TEXT ·Transpose(SB), NOSPLIT, $0-48
	MOVQ  dst+0(FP), DI
	MOVQ  ldd+8(FP), R8
	MOVQ  src+16(FP), SI
	MOVQ  lds+24(FP), R9
	MOVQ  rows+32(FP), R10
	MOVQ  cols+40(FP), R11
	TESTQ R10, R10
	JLE   tdone
	TESTQ R11, R11
	JLE   tdone
	SHLQ  $2, R8 // ldd in bytes
	SHLQ  $2, R9 // lds in bytes

trows: // DI = dst + i0, SI = src row i0, R10 rows left
	MOVQ R10, R12
	CMPQ R12, $16
	JLE  2(PC)
	MOVQ $16, R12 // R12: rows in this block
	lanes(R10, K2)
	MOVQ R11, R13 // columns left

tcols:
	lanes(R13, K1)
	MOVQ R11, AX
	SUBQ R13, AX // j0
	LEAQ (SI)(AX*4), BX
	IMULQ R8, AX
	LEAQ (DI)(AX*1), DX

	VMOVUPS.Z (BX), K1, Z0
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $1
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z1
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $2
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z2
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $3
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z3
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $4
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z4
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $5
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z5
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $6
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z6
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $7
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z7
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $8
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z8
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $9
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z9
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $10
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z10
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $11
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z11
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $12
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z12
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $13
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z13
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $14
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z14
	LEAQ      (BX)(R9*1), AX
	CMPQ      R12, $15
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z15
	// Z0-Z15 rows -> Z0-Z15 columns (Z16-Z31 scratch): unpack ps, unpack pd, two 128-bit shuffles
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xee, Z4, Z0, Z20
	VSHUFF32X4 $0x44, Z12, Z8, Z24
	VSHUFF32X4 $0xee, Z12, Z8, Z28
	VSHUFF32X4 $0x44, Z5, Z1, Z17
	VSHUFF32X4 $0xee, Z5, Z1, Z21
	VSHUFF32X4 $0x44, Z13, Z9, Z25
	VSHUFF32X4 $0xee, Z13, Z9, Z29
	VSHUFF32X4 $0x44, Z6, Z2, Z18
	VSHUFF32X4 $0xee, Z6, Z2, Z22
	VSHUFF32X4 $0x44, Z14, Z10, Z26
	VSHUFF32X4 $0xee, Z14, Z10, Z30
	VSHUFF32X4 $0x44, Z7, Z3, Z19
	VSHUFF32X4 $0xee, Z7, Z3, Z23
	VSHUFF32X4 $0x44, Z15, Z11, Z27
	VSHUFF32X4 $0xee, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z24, Z16, Z0
	VSHUFF32X4 $0xdd, Z24, Z16, Z4
	VSHUFF32X4 $0x88, Z28, Z20, Z8
	VSHUFF32X4 $0xdd, Z28, Z20, Z12
	VSHUFF32X4 $0x88, Z25, Z17, Z1
	VSHUFF32X4 $0xdd, Z25, Z17, Z5
	VSHUFF32X4 $0x88, Z29, Z21, Z9
	VSHUFF32X4 $0xdd, Z29, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z18, Z2
	VSHUFF32X4 $0xdd, Z26, Z18, Z6
	VSHUFF32X4 $0x88, Z30, Z22, Z10
	VSHUFF32X4 $0xdd, Z30, Z22, Z14
	VSHUFF32X4 $0x88, Z27, Z19, Z3
	VSHUFF32X4 $0xdd, Z27, Z19, Z7
	VSHUFF32X4 $0x88, Z31, Z23, Z11
	VSHUFF32X4 $0xdd, Z31, Z23, Z15
	MOVQ R13, CX // columns in this block: stores while c < CX
	VMOVUPS Z0, K2, (DX)
	CMPQ    CX, $1
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z1, K2, (DX)
	CMPQ    CX, $2
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z2, K2, (DX)
	CMPQ    CX, $3
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z3, K2, (DX)
	CMPQ    CX, $4
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z4, K2, (DX)
	CMPQ    CX, $5
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z5, K2, (DX)
	CMPQ    CX, $6
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z6, K2, (DX)
	CMPQ    CX, $7
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z7, K2, (DX)
	CMPQ    CX, $8
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z8, K2, (DX)
	CMPQ    CX, $9
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z9, K2, (DX)
	CMPQ    CX, $10
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z10, K2, (DX)
	CMPQ    CX, $11
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z11, K2, (DX)
	CMPQ    CX, $12
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z12, K2, (DX)
	CMPQ    CX, $13
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z13, K2, (DX)
	CMPQ    CX, $14
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z14, K2, (DX)
	CMPQ    CX, $15
	JLE     tnext
	ADDQ    R8, DX
	VMOVUPS Z15, K2, (DX)

tnext:
	SUBQ $16, R13
	JG   tcols
	ADDQ $64, DI
	MOVQ R9, AX
	SHLQ $4, AX
	ADDQ AX, SI
	SUBQ $16, R10
	JG   trows

tdone:
	VZEROUPPER
	RET

// func DivTranspose(out *float32, ldo int, ob *float32, sum *float64, n, hd int)
// Transpose's blocks over O^T (source rows d, 32 floats apart; columns c), each output row c
// divided by sum[c] in float64 before its masked store.
TEXT ·DivTranspose(SB), NOSPLIT, $0-48
	MOVQ  out+0(FP), DI
	MOVQ  ldo+8(FP), R8
	MOVQ  ob+16(FP), SI
	MOVQ  sum+24(FP), R9
	MOVQ  n+32(FP), R11
	MOVQ  hd+40(FP), R10
	TESTQ R10, R10
	JLE   ddone
	TESTQ R11, R11
	JLE   ddone
	SHLQ  $2, R8 // ldo in bytes

drows: // DI = out + d0, SI = O^T row d0, R10 dimensions left
	MOVQ R10, R12
	CMPQ R12, $16
	JLE  2(PC)
	MOVQ $16, R12 // R12: dimensions in this block
	lanes(R10, K2)
	MOVQ R11, R13 // queries left

dcols:
	lanes(R13, K1)
	MOVQ R11, AX
	SUBQ R13, AX // c0
	LEAQ (SI)(AX*4), BX

	VMOVUPS.Z (BX), K1, Z0
	LEAQ      128(BX), AX
	CMPQ      R12, $1
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z1
	LEAQ      128(BX), AX
	CMPQ      R12, $2
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z2
	LEAQ      128(BX), AX
	CMPQ      R12, $3
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z3
	LEAQ      128(BX), AX
	CMPQ      R12, $4
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z4
	LEAQ      128(BX), AX
	CMPQ      R12, $5
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z5
	LEAQ      128(BX), AX
	CMPQ      R12, $6
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z6
	LEAQ      128(BX), AX
	CMPQ      R12, $7
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z7
	LEAQ      128(BX), AX
	CMPQ      R12, $8
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z8
	LEAQ      128(BX), AX
	CMPQ      R12, $9
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z9
	LEAQ      128(BX), AX
	CMPQ      R12, $10
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z10
	LEAQ      128(BX), AX
	CMPQ      R12, $11
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z11
	LEAQ      128(BX), AX
	CMPQ      R12, $12
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z12
	LEAQ      128(BX), AX
	CMPQ      R12, $13
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z13
	LEAQ      128(BX), AX
	CMPQ      R12, $14
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z14
	LEAQ      128(BX), AX
	CMPQ      R12, $15
	CMOVQGT   AX, BX // the next row while there is one (a short block repeats its last)
	VMOVUPS.Z (BX), K1, Z15
	// Z0-Z15 rows -> Z0-Z15 columns (Z16-Z31 scratch): unpack ps, unpack pd, two 128-bit shuffles
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xee, Z4, Z0, Z20
	VSHUFF32X4 $0x44, Z12, Z8, Z24
	VSHUFF32X4 $0xee, Z12, Z8, Z28
	VSHUFF32X4 $0x44, Z5, Z1, Z17
	VSHUFF32X4 $0xee, Z5, Z1, Z21
	VSHUFF32X4 $0x44, Z13, Z9, Z25
	VSHUFF32X4 $0xee, Z13, Z9, Z29
	VSHUFF32X4 $0x44, Z6, Z2, Z18
	VSHUFF32X4 $0xee, Z6, Z2, Z22
	VSHUFF32X4 $0x44, Z14, Z10, Z26
	VSHUFF32X4 $0xee, Z14, Z10, Z30
	VSHUFF32X4 $0x44, Z7, Z3, Z19
	VSHUFF32X4 $0xee, Z7, Z3, Z23
	VSHUFF32X4 $0x44, Z15, Z11, Z27
	VSHUFF32X4 $0xee, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z24, Z16, Z0
	VSHUFF32X4 $0xdd, Z24, Z16, Z4
	VSHUFF32X4 $0x88, Z28, Z20, Z8
	VSHUFF32X4 $0xdd, Z28, Z20, Z12
	VSHUFF32X4 $0x88, Z25, Z17, Z1
	VSHUFF32X4 $0xdd, Z25, Z17, Z5
	VSHUFF32X4 $0x88, Z29, Z21, Z9
	VSHUFF32X4 $0xdd, Z29, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z18, Z2
	VSHUFF32X4 $0xdd, Z26, Z18, Z6
	VSHUFF32X4 $0x88, Z30, Z22, Z10
	VSHUFF32X4 $0xdd, Z30, Z22, Z14
	VSHUFF32X4 $0x88, Z27, Z19, Z3
	VSHUFF32X4 $0xdd, Z27, Z19, Z7
	VSHUFF32X4 $0x88, Z31, Z23, Z11
	VSHUFF32X4 $0xdd, Z31, Z23, Z15
	MOVQ R11, AX
	SUBQ R13, AX // c0
	LEAQ (R9)(AX*8), BX // sum[c0]
	IMULQ R8, AX
	LEAQ (DI)(AX*1), DX
	MOVQ R13, CX // queries in this block: stores while c < CX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y0, Z17
	VEXTRACTF64X4 $1, Z0, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $1
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y1, Z17
	VEXTRACTF64X4 $1, Z1, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $2
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y2, Z17
	VEXTRACTF64X4 $1, Z2, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $3
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y3, Z17
	VEXTRACTF64X4 $1, Z3, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $4
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y4, Z17
	VEXTRACTF64X4 $1, Z4, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $5
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y5, Z17
	VEXTRACTF64X4 $1, Z5, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $6
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y6, Z17
	VEXTRACTF64X4 $1, Z6, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $7
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y7, Z17
	VEXTRACTF64X4 $1, Z7, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $8
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y8, Z17
	VEXTRACTF64X4 $1, Z8, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $9
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y9, Z17
	VEXTRACTF64X4 $1, Z9, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $10
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y10, Z17
	VEXTRACTF64X4 $1, Z10, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $11
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y11, Z17
	VEXTRACTF64X4 $1, Z11, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $12
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y12, Z17
	VEXTRACTF64X4 $1, Z12, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $13
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y13, Z17
	VEXTRACTF64X4 $1, Z13, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $14
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y14, Z17
	VEXTRACTF64X4 $1, Z14, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)
	CMPQ          CX, $15
	JLE           dnext
	ADDQ          R8, DX
	ADDQ          $8, BX
	VBROADCASTSD  (BX), Z16
	VCVTPS2PD     Y15, Z17
	VEXTRACTF64X4 $1, Z15, Y18
	VCVTPS2PD     Y18, Z18
	VDIVPD        Z16, Z17, Z17
	VDIVPD        Z16, Z18, Z18
	VCVTPD2PS     Z17, Y17
	VCVTPD2PS     Z18, Y18
	VINSERTF64X4  $1, Y18, Z17, Z17
	VMOVUPS       Z17, K2, (DX)

dnext:
	SUBQ $16, R13
	JG   dcols
	ADDQ $64, DI
	ADDQ $2048, SI // 16 O^T rows of 32 floats
	SUBQ $16, R10
	JG   drows

ddone:
	VZEROUPPER
	RET
