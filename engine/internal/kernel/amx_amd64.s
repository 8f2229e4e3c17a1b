// amx_amd64.s: the AMX tile kernel, the float32 split into three bfloat16 pieces, and the
// tile unit's probe (amx_amd64.go has the contracts and the numerics; the weights' VNNI tiles
// are a transpose of k pairs, transpose_amd64.s).
//
// Go's assembler knows no AMX instruction, so each is written as its bytes, with the
// registers fixed (GNU as 2.40's encodings; the mnemonic beside each). Registers: SI the
// packed x, DI and R8 the two packed W column blocks, AX = 64 (every tile row stride in the
// packed buffers), CX the chunks left, DX and R11 rows 0 and 16 of c, R9 its row stride,
// R10 the tile configuration.
// Invariant: every output tile takes, per 32-wide k chunk in order, hi, mid, lo (see the
// Go file), from the +0 of TILEZERO, or (carry) from the float32 sums an earlier call stored:
// a dot product cut into calls at any chunk has the bits of the uncut one.
// Mutation that would silently break it: one TDPBF16PS's bytes naming another destination
// tile (C1 written twice, C0 never): every column block's first half then comes out +0 or
// doubled, which only a test that checks all four 16 x 16 quadrants sees.

#include "textflag.h"

#define LDTILECFG_R10    BYTE $0xc4; BYTE $0xc2; BYTE $0x78; BYTE $0x49; BYTE $0x02
#define TILERELEASE      BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
#define TILEZERO_T0      BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
#define TILEZERO_T1      BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8
#define TILEZERO_T2      BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0
#define TILEZERO_T3      BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8
// tileloadd (%rdi,%rax,1), %tmm6 and (%r8,%rax,1), %tmm7: the two W tiles of a chunk
#define LOAD_T6_DI       BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x07
#define LOAD_T7_R8       BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x00
// tileloadd disp32(%rsi,%rax,1), %tmm4 / %tmm5: x's pieces (disp = tile index * 1024)
#define LOAD_T4_SI(d1)   BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xa4; BYTE $0x06; BYTE $0x00; BYTE $d1; BYTE $0x00; BYTE $0x00
#define LOAD_T5_SI(d1)   BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xac; BYTE $0x06; BYTE $0x00; BYTE $d1; BYTE $0x00; BYTE $0x00
// tdpbf16ps: C0 += x rows 0-15 . W cols 0-15 (tmm0 += tmm4.tmm6), C1 += tmm4.tmm7,
// C2 += tmm5.tmm6 (rows 16-31), C3 += tmm5.tmm7
#define TDP_T0_T4_T6     BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4
#define TDP_T1_T4_T7     BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc
#define TDP_T2_T5_T6     BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5
#define TDP_T3_T5_T7     BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd
// tilestored %tmm0, (%rdx,%r9,1); %tmm1, 0x40(%rdx,%r9,1); %tmm2, (%r11,%r9,1); %tmm3, 0x40(%r11,%r9,1)
// tileloadd (%rdx,%r9,1), %tmm0; 0x40(%rdx,%r9,1), %tmm1; (%r11,%r9,1), %tmm2; 0x40(%r11,%r9,1), %tmm3
#define LOAD_T0          BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x0a
#define LOAD_T1          BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x0a; BYTE $0x40
#define LOAD_T2          BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x0b
#define LOAD_T3          BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x0b; BYTE $0x40
#define STORE_T0         BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x0a
#define STORE_T1         BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x0a; BYTE $0x40
#define STORE_T2         BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x0b
#define STORE_T3         BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x5c; BYTE $0x0b; BYTE $0x40

#define PIECE(d0, d1) \
	LOAD_T4_SI(d0) \
	LOAD_T5_SI(d1) \
	TDP_T0_T4_T6 \
	TDP_T1_T4_T7 \
	TDP_T2_T5_T6 \
	TDP_T3_T5_T7

// func AMXDot32x32(a, b0, b1 *uint16, chunks int, c *float32, ldc int, carry int, cfg *[64]byte)
TEXT ·AMXDot32x32(SB), NOSPLIT, $0-64
	MOVQ a+0(FP), SI
	MOVQ b0+8(FP), DI
	MOVQ b1+16(FP), R8
	MOVQ chunks+24(FP), CX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R9
	MOVQ cfg+56(FP), R10
	MOVQ $64, AX
	MOVQ R9, R11
	SHLQ $4, R11
	ADDQ DX, R11
	LDTILECFG_R10
	MOVQ carry+48(FP), BX
	TESTQ BX, BX
	JZ    zero
	LOAD_T0 // carry: the sums so far, exactly as stored
	LOAD_T1
	LOAD_T2
	LOAD_T3
	JMP   chunk

zero:
	TILEZERO_T0
	TILEZERO_T1
	TILEZERO_T2
	TILEZERO_T3

chunk:
	LOAD_T6_DI
	LOAD_T7_R8
	PIECE(0x00, 0x04) // hi: tiles 0 and 1 of the chunk
	PIECE(0x08, 0x0c) // mid
	PIECE(0x10, 0x14) // lo
	ADDQ $6144, SI
	ADDQ $1024, DI
	ADDQ $1024, R8
	DECQ CX
	JNZ  chunk

	STORE_T0
	STORE_T1
	STORE_T2
	STORE_T3
	TILERELEASE
	RET

// func AMXProducts(a, b0, b1 *uint16, rounds int, c *float32, ldc int, cfg *[64]byte)
// The probe: AMXDot32x32's registers and products, its loads once before the loop.
TEXT ·AMXProducts(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ b0+8(FP), DI
	MOVQ b1+16(FP), R8
	MOVQ rounds+24(FP), CX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R9
	MOVQ cfg+48(FP), R10
	MOVQ $64, AX
	MOVQ R9, R11
	SHLQ $4, R11
	ADDQ DX, R11
	LDTILECFG_R10
	TILEZERO_T0
	TILEZERO_T1
	TILEZERO_T2
	TILEZERO_T3
	LOAD_T6_DI
	LOAD_T7_R8
	LOAD_T4_SI(0x00)
	LOAD_T5_SI(0x04)

round:
	TDP_T0_T4_T6
	TDP_T1_T4_T7
	TDP_T2_T5_T6
	TDP_T3_T5_T7
	TDP_T0_T4_T6
	TDP_T1_T4_T7
	TDP_T2_T5_T6
	TDP_T3_T5_T7
	TDP_T0_T4_T6
	TDP_T1_T4_T7
	TDP_T2_T5_T6
	TDP_T3_T5_T7
	DECQ CX
	JNZ  round

	STORE_T0
	STORE_T1
	STORE_T2
	STORE_T3
	TILERELEASE
	RET

// piece converts the 32 float32 of lo, hi (each exactly a bfloat16) to their top halves and
// stores them at off(DI).
#define piece(lo, hi, off) \
	VPSRLD  $16, lo, lo \
	VPSRLD  $16, hi, hi \
	VPMOVDW lo, off(DI) \
	VPMOVDW hi, off+32(DI)

// func SplitBF16x3(dst *uint16, x *float32, chunks int)
TEXT ·SplitBF16x3(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         chunks+16(FP), CX
	MOVL         $0xffff0000, AX
	VPBROADCASTD AX, Z31
	TESTQ        CX, CX
	JZ           sdone

sloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VPANDD  Z31, Z0, Z2 // hi: x with its low 16 bits cleared
	VPANDD  Z31, Z1, Z3
	VSUBPS  Z2, Z0, Z4  // x - hi, exact
	VSUBPS  Z3, Z1, Z5
	VPANDD  Z31, Z4, Z6 // mid
	VPANDD  Z31, Z5, Z7
	VSUBPS  Z6, Z4, Z8  // lo = x - hi - mid, exact, at most 8 significant bits
	VSUBPS  Z7, Z5, Z9
	piece(Z2, Z3, 0)
	piece(Z6, Z7, 2048)
	piece(Z8, Z9, 4096)
	ADDQ    $128, SI
	ADDQ    $6144, DI
	DECQ    CX
	JNZ     sloop

sdone:
	VZEROUPPER
	RET



