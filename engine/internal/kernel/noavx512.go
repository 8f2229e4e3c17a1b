//go:build !amd64

// noavx512.go: no AVX-512 kernels off amd64; callers take their FMA6x16 or generic paths.
//
// Invariant: HasAVX512 and UseAVX512 are false, so nothing below is ever called.
// Mutation that would silently break it: setting HasAVX512 to true here, which would route
// MatMul, Attention and GELU into the panicking stubs.
package kernel

import "unsafe"

// HasAVX512 is false: there is no assembly kernel on this architecture.
var HasAVX512 = false

// UseAVX512 is false: callers take their generic paths.
var UseAVX512 = false

// FMA6x32 panics: there is no assembly kernel on this architecture.
func FMA6x32(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int) {
	panic("kernel: FMA6x32 without an assembly kernel")
}

// GELUTanh panics: there is no assembly kernel on this architecture.
func GELUTanh(x *float32, n int) { panic("kernel: GELUTanh without an assembly kernel") }

// PackBF16x32 panics: there is no assembly kernel on this architecture.
func PackBF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int) {
	panic("kernel: PackBF16x32 without an assembly kernel")
}

// Transpose panics: there is no assembly kernel on this architecture.
func Transpose(dst unsafe.Pointer, ldd int, src unsafe.Pointer, lds int, rows, cols int) {
	panic("kernel: Transpose without an assembly kernel")
}

// DivTranspose panics: there is no assembly kernel on this architecture.
func DivTranspose(out *float32, ldo int, ob *float32, sum *float64, n, hd int) {
	panic("kernel: DivTranspose without an assembly kernel")
}

// ColScaleMax panics: there is no assembly kernel on this architecture.
func ColScaleMax(s *float32, rows int, scale float32, m *[32]float32) {
	panic("kernel: ColScaleMax without an assembly kernel")
}

// ColExpSum panics: there is no assembly kernel on this architecture.
func ColExpSum(s *float32, rows int, m *[32]float32, sum *[32]float64) {
	panic("kernel: ColExpSum without an assembly kernel")
}

// ColScale panics: there is no assembly kernel on this architecture.
func ColScale(o *float32, rows int, a *[32]float32) {
	panic("kernel: ColScale without an assembly kernel")
}

// PackF16x32 panics: there is no assembly kernel on this architecture.
func PackF16x32(dst *float32, src unsafe.Pointer, rowBytes int, kpairs int) {
	panic("kernel: PackF16x32 without an assembly kernel")
}

// RopeHalves panics: there is no assembly kernel on this architecture.
func RopeHalves(x *float32, cos *float32, sin *float32, half int) {
	panic("kernel: RopeHalves without an assembly kernel")
}

// SumF64 panics: there is no assembly kernel on this architecture.
func SumF64(x *float32, n16 int) float64 { panic("kernel: SumF64 without an assembly kernel") }

// SumSqDevF64 panics: there is no assembly kernel on this architecture.
func SumSqDevF64(x *float32, n16 int, mean float64) float64 {
	panic("kernel: SumSqDevF64 without an assembly kernel")
}

// NormAffine panics: there is no assembly kernel on this architecture.
func NormAffine(out, x, w, b *float32, n16 int, mean, inv float64) {
	panic("kernel: NormAffine without an assembly kernel")
}

// HasAMX is false: there is no AMX off amd64.
var HasAMX = false

// UseAMX is false: MatMul takes its other paths.
var UseAMX = false

// AMXTileConfig is unused off amd64.
var AMXTileConfig [64]byte

// AMXDot32x32 panics: there is no AMX off amd64.
func AMXDot32x32(a, b0, b1 *uint16, chunks int, c *float32, ldc int, carry int, cfg *[64]byte) {
	panic("kernel: AMXDot32x32 without AMX")
}

// AMXProducts panics: there is no AMX off amd64.
func AMXProducts(a, b0, b1 *uint16, rounds int, c *float32, ldc int, cfg *[64]byte) {
	panic("kernel: AMXProducts without AMX")
}

// SplitBF16x3 panics: there is no AMX off amd64.
func SplitBF16x3(dst *uint16, x *float32, chunks int) { panic("kernel: SplitBF16x3 without AMX") }

// AddRows panics: there is no assembly kernel on this architecture.
func AddRows(dst *float32, ld int, src *float32, lds int, rows int, n int) {
	panic("kernel: AddRows without an assembly kernel")
}

// RowSumsF64 panics: there is no assembly kernel on this architecture.
func RowSumsF64(x, in *float32, n int, s *[5]float64) {
	panic("kernel: RowSumsF64 without an assembly kernel")
}
