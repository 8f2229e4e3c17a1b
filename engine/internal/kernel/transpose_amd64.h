// transpose_amd64.h: the 16 x 16 register transpose and the lane mask that
// transpose_amd64.s and pack_amd64.s share.
//
// TRANSPOSE16 turns rows Z0-Z15 (Zi[j] = M[i][j], 32 bits each) into columns (Zj[i] =
// M[i][j]), with Z16-Z31 as scratch: unpack ps pairs rows (within 128-bit lanes), unpack pd
// pairs those pairs, and two rounds of VSHUFF32X4 gather each column's four 128-bit lanes;
// 64 shuffles, the bits moved, never read as numbers.
// Mutation that would silently break it: one immediate of the last round swapped (0x88 for
// 0xdd): four columns then hold another column's rows, each still a plausible value
// (TestTranspose compares every element).

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

#define TRANSPOSE16 \
	VUNPCKLPS  Z1, Z0, Z16 \
	VUNPCKHPS  Z1, Z0, Z17 \
	VUNPCKLPS  Z3, Z2, Z18 \
	VUNPCKHPS  Z3, Z2, Z19 \
	VUNPCKLPS  Z5, Z4, Z20 \
	VUNPCKHPS  Z5, Z4, Z21 \
	VUNPCKLPS  Z7, Z6, Z22 \
	VUNPCKHPS  Z7, Z6, Z23 \
	VUNPCKLPS  Z9, Z8, Z24 \
	VUNPCKHPS  Z9, Z8, Z25 \
	VUNPCKLPS  Z11, Z10, Z26 \
	VUNPCKHPS  Z11, Z10, Z27 \
	VUNPCKLPS  Z13, Z12, Z28 \
	VUNPCKHPS  Z13, Z12, Z29 \
	VUNPCKLPS  Z15, Z14, Z30 \
	VUNPCKHPS  Z15, Z14, Z31 \
	VUNPCKLPD  Z18, Z16, Z0 \
	VUNPCKHPD  Z18, Z16, Z1 \
	VUNPCKLPD  Z19, Z17, Z2 \
	VUNPCKHPD  Z19, Z17, Z3 \
	VUNPCKLPD  Z22, Z20, Z4 \
	VUNPCKHPD  Z22, Z20, Z5 \
	VUNPCKLPD  Z23, Z21, Z6 \
	VUNPCKHPD  Z23, Z21, Z7 \
	VUNPCKLPD  Z26, Z24, Z8 \
	VUNPCKHPD  Z26, Z24, Z9 \
	VUNPCKLPD  Z27, Z25, Z10 \
	VUNPCKHPD  Z27, Z25, Z11 \
	VUNPCKLPD  Z30, Z28, Z12 \
	VUNPCKHPD  Z30, Z28, Z13 \
	VUNPCKLPD  Z31, Z29, Z14 \
	VUNPCKHPD  Z31, Z29, Z15 \
	VSHUFF32X4 $0x44, Z4, Z0, Z16 \
	VSHUFF32X4 $0xee, Z4, Z0, Z20 \
	VSHUFF32X4 $0x44, Z12, Z8, Z24 \
	VSHUFF32X4 $0xee, Z12, Z8, Z28 \
	VSHUFF32X4 $0x44, Z5, Z1, Z17 \
	VSHUFF32X4 $0xee, Z5, Z1, Z21 \
	VSHUFF32X4 $0x44, Z13, Z9, Z25 \
	VSHUFF32X4 $0xee, Z13, Z9, Z29 \
	VSHUFF32X4 $0x44, Z6, Z2, Z18 \
	VSHUFF32X4 $0xee, Z6, Z2, Z22 \
	VSHUFF32X4 $0x44, Z14, Z10, Z26 \
	VSHUFF32X4 $0xee, Z14, Z10, Z30 \
	VSHUFF32X4 $0x44, Z7, Z3, Z19 \
	VSHUFF32X4 $0xee, Z7, Z3, Z23 \
	VSHUFF32X4 $0x44, Z15, Z11, Z27 \
	VSHUFF32X4 $0xee, Z15, Z11, Z31 \
	VSHUFF32X4 $0x88, Z24, Z16, Z0 \
	VSHUFF32X4 $0xdd, Z24, Z16, Z4 \
	VSHUFF32X4 $0x88, Z28, Z20, Z8 \
	VSHUFF32X4 $0xdd, Z28, Z20, Z12 \
	VSHUFF32X4 $0x88, Z25, Z17, Z1 \
	VSHUFF32X4 $0xdd, Z25, Z17, Z5 \
	VSHUFF32X4 $0x88, Z29, Z21, Z9 \
	VSHUFF32X4 $0xdd, Z29, Z21, Z13 \
	VSHUFF32X4 $0x88, Z26, Z18, Z2 \
	VSHUFF32X4 $0xdd, Z26, Z18, Z6 \
	VSHUFF32X4 $0x88, Z30, Z22, Z10 \
	VSHUFF32X4 $0xdd, Z30, Z22, Z14 \
	VSHUFF32X4 $0x88, Z27, Z19, Z3 \
	VSHUFF32X4 $0xdd, Z27, Z19, Z7 \
	VSHUFF32X4 $0x88, Z31, Z23, Z11 \
	VSHUFF32X4 $0xdd, Z31, Z23, Z15

// LOADROW16(step) loads rows Z0-Z15 from BX on, the columns in K1 (the rest zero), each next
// row at step(BX) while R12 (the rows there are) allows, else the last row again.
#define LOADROW(z, next, step) \
	VMOVUPS.Z (BX), K1, z \
	LEAQ      step, AX \
	CMPQ      R12, $next \
	CMOVQGT   AX, BX

#define LOADROW16(step) \
	LOADROW(Z0, 1, step) \
	LOADROW(Z1, 2, step) \
	LOADROW(Z2, 3, step) \
	LOADROW(Z3, 4, step) \
	LOADROW(Z4, 5, step) \
	LOADROW(Z5, 6, step) \
	LOADROW(Z6, 7, step) \
	LOADROW(Z7, 8, step) \
	LOADROW(Z8, 9, step) \
	LOADROW(Z9, 10, step) \
	LOADROW(Z10, 11, step) \
	LOADROW(Z11, 12, step) \
	LOADROW(Z12, 13, step) \
	LOADROW(Z13, 14, step) \
	LOADROW(Z14, 15, step) \
	VMOVUPS.Z (BX), K1, Z15
