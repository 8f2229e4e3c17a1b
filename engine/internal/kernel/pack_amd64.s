// pack_amd64.s: widening a strip of 32 weight rows into FMA6x32's k-major panel with AVX-512
// (engine/cpu's packPanel, the aligned BF16, F16 and F32 cases): per half strip, blocks of 16
// rows x 16 columns (a column a k for F32, a pair of k for BF16 and F16, 32 bits either way)
// loaded, transposed in registers (transpose_amd64.s's 64 shuffles), and each column widened
// and stored as panel rows. The first version gathered a column of 32 rows at a time; on AMD
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
	VMOVDQU32.Z (BX), K1, Z0
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z1
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z2
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z3
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z4
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z5
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z6
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z7
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z8
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z9
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z10
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z11
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z12
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z13
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z14
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z15
	// Z0-Z15 rows -> Z0-Z15 columns (Z16-Z31 scratch), as transpose_amd64.s
	VUNPCKLPS  Z1, Z0, Z16
	VUNPCKHPS  Z1, Z0, Z17
	VUNPCKLPS  Z3, Z2, Z18
	VUNPCKHPS  Z3, Z2, Z19
	VUNPCKLPS  Z5, Z4, Z20
	VUNPCKHPS  Z5, Z4, Z21
	VUNPCKLPS  Z7, Z6, Z22
	VUNPCKHPS  Z7, Z6, Z23
	VUNPCKLPS  Z9, Z8, Z24
	VUNPCKHPS  Z9, Z8, Z25
	VUNPCKLPS  Z11, Z10, Z26
	VUNPCKHPS  Z11, Z10, Z27
	VUNPCKLPS  Z13, Z12, Z28
	VUNPCKHPS  Z13, Z12, Z29
	VUNPCKLPS  Z15, Z14, Z30
	VUNPCKHPS  Z15, Z14, Z31
	VUNPCKLPD  Z18, Z16, Z0
	VUNPCKHPD  Z18, Z16, Z1
	VUNPCKLPD  Z19, Z17, Z2
	VUNPCKHPD  Z19, Z17, Z3
	VUNPCKLPD  Z22, Z20, Z4
	VUNPCKHPD  Z22, Z20, Z5
	VUNPCKLPD  Z23, Z21, Z6
	VUNPCKHPD  Z23, Z21, Z7
	VUNPCKLPD  Z26, Z24, Z8
	VUNPCKHPD  Z26, Z24, Z9
	VUNPCKLPD  Z27, Z25, Z10
	VUNPCKHPD  Z27, Z25, Z11
	VUNPCKLPD  Z30, Z28, Z12
	VUNPCKHPD  Z30, Z28, Z13
	VUNPCKLPD  Z31, Z29, Z14
	VUNPCKHPD  Z31, Z29, Z15
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
	MOVL         $0xffff0000, AX
	VPBROADCASTD AX, Z16
	MOVQ R13, CX // columns in this block: stores while c < CX
	VPSLLD  $16, Z0, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z0, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $1
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z1, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z1, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $2
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z2, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z2, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $3
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z3, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z3, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $4
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z4, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z4, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $5
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z5, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z5, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $6
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z6, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z6, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $7
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z7, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z7, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $8
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z8, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z8, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $9
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z9, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z9, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $10
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z10, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z10, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $11
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z11, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z11, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $12
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z12, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z12, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $13
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z13, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z13, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $14
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z14, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z14, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)
	CMPQ    CX, $15
	JLE     PackBF16x32next
	ADDQ    $256, DX
	VPSLLD  $16, Z15, Z17 // k = 2p: the low half moved up
	VPANDD  Z16, Z15, Z18 // k = 2p+1: the high half
	VMOVUPS Z17, (DX)
	VMOVUPS Z18, 128(DX)

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

// func PackF32x32(dst *float32, src unsafe.Pointer, rowBytes int, kn int)
TEXT ·PackF32x32(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  rowBytes+16(FP), R9
	MOVQ  kn+24(FP), R10
	TESTQ R10, R10
	JLE   PackF32x32done
	MOVQ  $2, R11 // row halves left: rows 0-15, then 16-31

PackF32x32half:
	MOVQ R10, R13 // columns left

PackF32x32cols:
	lanes(R13, K1)
	MOVQ R10, AX
	SUBQ R13, AX // this block's first column
	LEAQ (SI)(AX*4), BX
	IMULQ $128, AX
	LEAQ (DI)(AX*1), DX
	VMOVDQU32.Z (BX), K1, Z0
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z1
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z2
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z3
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z4
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z5
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z6
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z7
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z8
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z9
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z10
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z11
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z12
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z13
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z14
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z15
	// Z0-Z15 rows -> Z0-Z15 columns (Z16-Z31 scratch), as transpose_amd64.s
	VUNPCKLPS  Z1, Z0, Z16
	VUNPCKHPS  Z1, Z0, Z17
	VUNPCKLPS  Z3, Z2, Z18
	VUNPCKHPS  Z3, Z2, Z19
	VUNPCKLPS  Z5, Z4, Z20
	VUNPCKHPS  Z5, Z4, Z21
	VUNPCKLPS  Z7, Z6, Z22
	VUNPCKHPS  Z7, Z6, Z23
	VUNPCKLPS  Z9, Z8, Z24
	VUNPCKHPS  Z9, Z8, Z25
	VUNPCKLPS  Z11, Z10, Z26
	VUNPCKHPS  Z11, Z10, Z27
	VUNPCKLPS  Z13, Z12, Z28
	VUNPCKHPS  Z13, Z12, Z29
	VUNPCKLPS  Z15, Z14, Z30
	VUNPCKHPS  Z15, Z14, Z31
	VUNPCKLPD  Z18, Z16, Z0
	VUNPCKHPD  Z18, Z16, Z1
	VUNPCKLPD  Z19, Z17, Z2
	VUNPCKHPD  Z19, Z17, Z3
	VUNPCKLPD  Z22, Z20, Z4
	VUNPCKHPD  Z22, Z20, Z5
	VUNPCKLPD  Z23, Z21, Z6
	VUNPCKHPD  Z23, Z21, Z7
	VUNPCKLPD  Z26, Z24, Z8
	VUNPCKHPD  Z26, Z24, Z9
	VUNPCKLPD  Z27, Z25, Z10
	VUNPCKHPD  Z27, Z25, Z11
	VUNPCKLPD  Z30, Z28, Z12
	VUNPCKHPD  Z30, Z28, Z13
	VUNPCKLPD  Z31, Z29, Z14
	VUNPCKHPD  Z31, Z29, Z15
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
	VMOVUPS Z0, (DX)
	CMPQ    CX, $1
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z1, (DX)
	CMPQ    CX, $2
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z2, (DX)
	CMPQ    CX, $3
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z3, (DX)
	CMPQ    CX, $4
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z4, (DX)
	CMPQ    CX, $5
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z5, (DX)
	CMPQ    CX, $6
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z6, (DX)
	CMPQ    CX, $7
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z7, (DX)
	CMPQ    CX, $8
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z8, (DX)
	CMPQ    CX, $9
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z9, (DX)
	CMPQ    CX, $10
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z10, (DX)
	CMPQ    CX, $11
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z11, (DX)
	CMPQ    CX, $12
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z12, (DX)
	CMPQ    CX, $13
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z13, (DX)
	CMPQ    CX, $14
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z14, (DX)
	CMPQ    CX, $15
	JLE     PackF32x32next
	ADDQ    $128, DX
	VMOVUPS Z15, (DX)

PackF32x32next:
	SUBQ $16, R13
	JG   PackF32x32cols
	MOVQ R9, AX
	SHLQ $4, AX
	ADDQ AX, SI // rows 16-31
	ADDQ $64, DI
	DECQ R11
	JNZ  PackF32x32half

PackF32x32done:
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
	VMOVDQU32.Z (BX), K1, Z0
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z1
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z2
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z3
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z4
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z5
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z6
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z7
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z8
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z9
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z10
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z11
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z12
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z13
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z14
	ADDQ        R9, BX
	VMOVDQU32.Z (BX), K1, Z15
	// Z0-Z15 rows -> Z0-Z15 columns (Z16-Z31 scratch), as transpose_amd64.s
	VUNPCKLPS  Z1, Z0, Z16
	VUNPCKHPS  Z1, Z0, Z17
	VUNPCKLPS  Z3, Z2, Z18
	VUNPCKHPS  Z3, Z2, Z19
	VUNPCKLPS  Z5, Z4, Z20
	VUNPCKHPS  Z5, Z4, Z21
	VUNPCKLPS  Z7, Z6, Z22
	VUNPCKHPS  Z7, Z6, Z23
	VUNPCKLPS  Z9, Z8, Z24
	VUNPCKHPS  Z9, Z8, Z25
	VUNPCKLPS  Z11, Z10, Z26
	VUNPCKHPS  Z11, Z10, Z27
	VUNPCKLPS  Z13, Z12, Z28
	VUNPCKHPS  Z13, Z12, Z29
	VUNPCKLPS  Z15, Z14, Z30
	VUNPCKHPS  Z15, Z14, Z31
	VUNPCKLPD  Z18, Z16, Z0
	VUNPCKHPD  Z18, Z16, Z1
	VUNPCKLPD  Z19, Z17, Z2
	VUNPCKHPD  Z19, Z17, Z3
	VUNPCKLPD  Z22, Z20, Z4
	VUNPCKHPD  Z22, Z20, Z5
	VUNPCKLPD  Z23, Z21, Z6
	VUNPCKHPD  Z23, Z21, Z7
	VUNPCKLPD  Z26, Z24, Z8
	VUNPCKHPD  Z26, Z24, Z9
	VUNPCKLPD  Z27, Z25, Z10
	VUNPCKHPD  Z27, Z25, Z11
	VUNPCKLPD  Z30, Z28, Z12
	VUNPCKHPD  Z30, Z28, Z13
	VUNPCKLPD  Z31, Z29, Z14
	VUNPCKHPD  Z31, Z29, Z15
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
	VPMOVDW   Z0, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z0, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $1
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z1, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z1, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $2
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z2, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z2, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $3
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z3, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z3, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $4
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z4, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z4, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $5
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z5, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z5, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $6
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z6, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z6, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $7
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z7, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z7, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $8
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z8, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z8, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $9
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z9, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z9, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $10
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z10, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z10, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $11
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z11, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z11, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $12
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z12, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z12, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $13
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z13, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z13, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $14
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z14, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z14, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)
	CMPQ    CX, $15
	JLE     PackF16x32next
	ADDQ    $256, DX
	VPMOVDW   Z15, Y17 // k = 2p: the low halves
	VCVTPH2PS Y17, Z17
	VPSRLD    $16, Z15, Z18 // k = 2p+1
	VPMOVDW   Z18, Y18
	VCVTPH2PS Y18, Z18
	VMOVUPS   Z17, (DX)
	VMOVUPS   Z18, 128(DX)

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
