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
// The kernel loads each operand tile a piece ahead of its products and prefetches the next
// chunk's lines (its own comment); neither changes which products reach a tile or their order.
// Mutation that would silently break it: one TDPBF16PS's bytes naming another destination
// tile (C1 written twice, C0 never): every column block's first half then comes out +0 or
// doubled, which only a test that checks all four 16 x 16 quadrants sees; or, in the pipelined
// loop, a piece's load moved above the last product that reads its register (that product
// then multiplies the next piece: mid counted twice, hi never).

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

// PF_NEXT(k): prefetch into L1 the next chunk's lines k, k+8, ..., k+56 of x's pieces (SI
// not yet advanced: the next chunk starts at +6144) and lines k and k+8 of each W tile (+1024).
#define PF_NEXT(k) \
	PREFETCHT0 (6144+64*k)(SI) \
	PREFETCHT0 (6656+64*k)(SI) \
	PREFETCHT0 (7168+64*k)(SI) \
	PREFETCHT0 (7680+64*k)(SI) \
	PREFETCHT0 (8192+64*k)(SI) \
	PREFETCHT0 (8704+64*k)(SI) \
	PREFETCHT0 (9216+64*k)(SI) \
	PREFETCHT0 (9728+64*k)(SI) \
	PREFETCHT0 (1024+64*k)(DI) \
	PREFETCHT0 (1536+64*k)(DI) \
	PREFETCHT0 (1024+64*k)(R8) \
	PREFETCHT0 (1536+64*k)(R8)

// PF_LO(k): the rest of the next chunk's x lines (64+k, 68+k, ..., 92+k), SI advanced.
#define PF_LO(k) \
	PREFETCHT0 (4096+64*k)(SI) \
	PREFETCHT0 (4352+64*k)(SI) \
	PREFETCHT0 (4608+64*k)(SI) \
	PREFETCHT0 (4864+64*k)(SI) \
	PREFETCHT0 (5120+64*k)(SI) \
	PREFETCHT0 (5376+64*k)(SI) \
	PREFETCHT0 (5632+64*k)(SI) \
	PREFETCHT0 (5888+64*k)(SI)

// func AMXDot32x32(a, b0, b1 *uint16, chunks int, c *float32, ldc int, carry int, cfg *[64]byte)
//
// Software-pipelined: every operand tile is loaded right after the last product that reads
// its register (one piece ahead: the tile unit starts each product in order, and a product
// right after its own load waited for it), the last chunk peeled so that no tile is loaded
// past the operands, and each chunk prefetches the next chunk's 8 KiB (x's pieces from L2, W
// from L3) into L1 between its products. Measured on the 16-core device (2026-12-03, MatMul
// alone, the block's four shapes at 1,024 rows, 21 rounds interleaved call by call): loads
// ahead alone 0.93-0.99 of the time of loads just before their products; with the prefetch
// 0.71-0.87 at 2 and 16 threads (the B-only prefetch two chunks ahead 0.85-0.97). The order of
// the products into each tile is unchanged: the bits are the plain loop's.
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
	JMP   start

zero:
	TILEZERO_T0
	TILEZERO_T1
	TILEZERO_T2
	TILEZERO_T3

start:
	LOAD_T6_DI
	LOAD_T7_R8
	LOAD_T4_SI(0x00)
	LOAD_T5_SI(0x04)
	DECQ CX
	JZ   last

chunk: // T4, T5 hold this chunk's hi, T6, T7 its W tiles
	TDP_T0_T4_T6 // hi
	PF_NEXT(0)
	TDP_T1_T4_T7
	PF_NEXT(1)
	LOAD_T4_SI(0x08)
	TDP_T2_T5_T6
	PF_NEXT(2)
	TDP_T3_T5_T7
	PF_NEXT(3)
	LOAD_T5_SI(0x0c)
	TDP_T0_T4_T6 // mid
	PF_NEXT(4)
	TDP_T1_T4_T7
	PF_NEXT(5)
	LOAD_T4_SI(0x10)
	TDP_T2_T5_T6
	PF_NEXT(6)
	TDP_T3_T5_T7
	PF_NEXT(7)
	LOAD_T5_SI(0x14)
	ADDQ $6144, SI
	ADDQ $1024, DI
	ADDQ $1024, R8
	TDP_T0_T4_T6 // lo; the next chunk's tiles load as their registers free
	PF_LO(0)
	TDP_T2_T5_T6
	PF_LO(1)
	LOAD_T6_DI
	TDP_T1_T4_T7
	PF_LO(2)
	LOAD_T4_SI(0x00)
	TDP_T3_T5_T7
	PF_LO(3)
	LOAD_T7_R8
	LOAD_T5_SI(0x04)
	DECQ CX
	JNZ  chunk

last: // the last chunk: no loads past it
	TDP_T0_T4_T6
	TDP_T1_T4_T7
	LOAD_T4_SI(0x08)
	TDP_T2_T5_T6
	TDP_T3_T5_T7
	LOAD_T5_SI(0x0c)
	TDP_T0_T4_T6
	TDP_T1_T4_T7
	LOAD_T4_SI(0x10)
	TDP_T2_T5_T6
	TDP_T3_T5_T7
	LOAD_T5_SI(0x14)
	TDP_T0_T4_T6
	TDP_T1_T4_T7
	TDP_T2_T5_T6
	TDP_T3_T5_T7

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



