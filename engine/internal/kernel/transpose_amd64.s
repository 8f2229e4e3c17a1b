// transpose_amd64.s: the flash attention's transposes (engine/cpu's packQT and packVT, and
// the output's O^T / l) and AMX's VNNI weight tiles (packVNNI) in 16 x 16 blocks: 16 rows
// loaded, transposed in registers (unpack ps, unpack pd, two rounds of 128-bit shuffles: 64
// shuffles a block), stored as 16 columns.
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
#include "transpose_amd64.h"

// func Transpose(dst unsafe.Pointer, ldd int, src unsafe.Pointer, lds int, rows, cols int)
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

	LOADROW16((BX)(R9*1))
	TRANSPOSE16
	MOVQ R13, CX // columns in this block: stores while c < CX
#define TSTORE(z, n) \
	VMOVUPS z, K2, (DX) \
	CMPQ    CX, $n \
	JLE     tnext \
	ADDQ    R8, DX
	TSTORE(Z0, 1)
	TSTORE(Z1, 2)
	TSTORE(Z2, 3)
	TSTORE(Z3, 4)
	TSTORE(Z4, 5)
	TSTORE(Z5, 6)
	TSTORE(Z6, 7)
	TSTORE(Z7, 8)
	TSTORE(Z8, 9)
	TSTORE(Z9, 10)
	TSTORE(Z10, 11)
	TSTORE(Z11, 12)
	TSTORE(Z12, 13)
	TSTORE(Z13, 14)
	TSTORE(Z14, 15)
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

	LOADROW16(128(BX))
	TRANSPOSE16
	MOVQ R11, AX
	SUBQ R13, AX // c0
	LEAQ (R9)(AX*8), BX // sum[c0]
	IMULQ R8, AX
	LEAQ (DI)(AX*1), DX
	MOVQ R13, CX // queries in this block: stores while c < CX
// DIVROW stores output row z / sum (BX): float32(float64(z) / l), the lanes in K2.
#define DIVROW(z, y) \
	VBROADCASTSD  (BX), Z16 \
	VCVTPS2PD     y, Z17 \
	VEXTRACTF64X4 $1, z, Y18 \
	VCVTPS2PD     Y18, Z18 \
	VDIVPD        Z16, Z17, Z17 \
	VDIVPD        Z16, Z18, Z18 \
	VCVTPD2PS     Z17, Y17 \
	VCVTPD2PS     Z18, Y18 \
	VINSERTF64X4  $1, Y18, Z17, Z17 \
	VMOVUPS       Z17, K2, (DX)

#define DSTORE(z, y, n) \
	DIVROW(z, y) \
	CMPQ CX, $n \
	JLE  dnext \
	ADDQ R8, DX \
	ADDQ $8, BX
	DSTORE(Z0, Y0, 1)
	DSTORE(Z1, Y1, 2)
	DSTORE(Z2, Y2, 3)
	DSTORE(Z3, Y3, 4)
	DSTORE(Z4, Y4, 5)
	DSTORE(Z5, Y5, 6)
	DSTORE(Z6, Y6, 7)
	DSTORE(Z7, Y7, 8)
	DSTORE(Z8, Y8, 9)
	DSTORE(Z9, Y9, 10)
	DSTORE(Z10, Y10, 11)
	DSTORE(Z11, Y11, 12)
	DSTORE(Z12, Y12, 13)
	DSTORE(Z13, Y13, 14)
	DSTORE(Z14, Y14, 15)
	DIVROW(Z15, Y15)

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
