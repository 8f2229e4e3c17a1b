// amx_amd64.go: the AMX tile kernel's Go side (Intel AMX-BF16: Sapphire Rapids and later):
// whether this process may use it, and the declarations of amx_amd64.s.
//
// Numerics. AMX multiplies bfloat16 pairs and accumulates in float32. The weights of a bf16
// checkpoint are bfloat16 already; x (float32) is cut into three bfloat16 pieces,
// x = hi + mid + lo EXACTLY (SplitBF16x3: hi is x with its low 16 bits cleared, mid the same
// of x-hi, lo = x-hi-mid, which has at most 8 significant bits), so every product of a piece
// with a weight is exact in float32 and y = sum over k of (hi+mid+lo)*w is the float32 dot
// product of x with W, accumulated by the tile unit. Measured against a float64 reference
// (1,024 x 1,152 x 4,320, this file's first test machine) its error is a third of the FMA
// chain's (mean 5.5e-9 against 1.7e-8 of sum |x*w|). What is lost: subnormal pieces and
// products (the tile unit treats them as zero), below 2^-126 in absolute value.
//
// Invariant: each output is one tile-unit accumulator that starts from +0 and takes, for each
// 32-wide k chunk in order, the hi, then the mid, then the lo piece (TDPBF16PS); it depends on
// x row r, W row o and in alone, never on the rows or columns around it, the tiling or the
// thread count. UseAMX is fixed at start-up and chosen by the weight's dtype alone (BF16),
// never by a shape.
// Mutation that would silently break it: dropping the lo piece "as negligible" (x then has 16
// significant bits, errors near 2^-17 of |x|: engine/cpu's TestAMXAccuracy and the kernel's TestAMXDot32x32 fail); or taking
// the AMX path for "large" calls only, which makes a row's bits depend on the engine's tile.
package kernel

import (
	"os"

	"golang.org/x/sys/cpu"
)

// HasAMX says whether this process may run the AMX kernels: the CPU has AMX-TILE and
// AMX-BF16, the AVX-512 kernels run (the split and the packer are AVX-512 code), the user did
// not turn it off (INSPECTOR_AMX=off: nothing of AMX then runs in the process, not even the
// request), and Linux granted the process the tile data state (arch_prctl
// ARCH_REQ_XCOMP_PERM, Linux 5.16+; without it the first tile instruction faults). Nothing
// may write it.
var HasAMX = HasAVX512 && cpu.X86.HasAMXTile && cpu.X86.HasAMXBF16 && os.Getenv(EnvAMX) != "off" && requestTileData()

// UseAMX selects the AMX path for MatMul with BF16 weights. It starts as HasAMX; tests flip it
// (never to true without HasAMX) and restore it; nothing else may write it.
var UseAMX = HasAMX

// AMXTileConfig is the tile configuration every AMX kernel loads: palette 1, tiles 0-7 of 16
// rows of 64 bytes (16 x 16 float32 or 16 x 32 bfloat16).
var AMXTileConfig = func() (c [64]byte) {
	c[0] = 1
	for t := range 8 {
		c[16+2*t] = 64 // colsb, little-endian uint16
		c[48+t] = 16   // rows
	}
	return c
}()

// AMXDot32x32 (amx_amd64.s) writes the 32 x 32 float32 block c (row stride ldc bytes) as the
// dot products (added to c's values when carry != 0, from +0 otherwise) of 32 rows of packed x (a: per k chunk, 6 tiles of 16 rows x 32 bfloat16, in
// the order hi rows 0-15, hi rows 16-31, mid, mid, lo, lo) with 32 columns of packed W (b0 for
// columns 0-15, b1 for 16-31: per k chunk one tile of 16 k pairs x 16 columns, VNNI order),
// over chunks k chunks of 32. Call it only when HasAMX; chunks >= 1. It loads and prefetches
// nothing past its chunks (a chunk prefetches the next; the last, peeled, none).
//
//go:noescape
func AMXDot32x32(a, b0, b1 *uint16, chunks int, c *float32, ldc int, carry int, cfg *[64]byte)

// AMXProducts (amx_amd64.s) is a probe of the tile unit, not a kernel of the engine: it loads
// the first chunk's rows 0-15 and 16-31 of hi (a) and the two W tiles (b0, b1) once, then runs
// rounds times AMXDot32x32's 12 products of one chunk on them (the same four accumulating
// tiles, in the same order) with no loads, and stores the four tiles to c (row stride ldc
// bytes), from +0. Its rate against AMXDot32x32's says whether the kernel waits on its loads
// or on the products (BenchmarkAMXDot32x32Threads). Call it only when HasAMX; rounds >= 1.
//
//go:noescape
func AMXProducts(a, b0, b1 *uint16, rounds int, c *float32, ldc int, cfg *[64]byte)

// SplitBF16x3 (amx_amd64.s) cuts x[0:32*chunks] into its three bfloat16 pieces (the file
// comment) and writes them for AMXDot32x32: chunk c's piece p at dst + c*3072 + p*1024 (in
// uint16), 32 values each. Call it only when HasAMX.
//
//go:noescape
func SplitBF16x3(dst *uint16, x *float32, chunks int)
