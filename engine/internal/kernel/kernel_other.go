//go:build !amd64

// kernel_other.go: no assembly kernel off amd64; callers always take their generic paths.
//
// Invariant: UseFMA and HasFMA are false, so FMA6x16 is never called here.
// Mutation that would silently break it: setting HasFMA to true on another architecture,
// which would route MatMul into the panicking stub below.
package kernel

import "unsafe"

// HasFMA is false: there is no assembly kernel on this architecture.
var HasFMA = false

// UseFMA is false: callers take their generic paths.
var UseFMA = false

// FMA6x16 panics: there is no assembly kernel on this architecture.
func FMA6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int) {
	panic("kernel: FMA6x16 without an assembly kernel")
}

// HasAVX512 is false: there is no assembly kernel on this architecture.
var HasAVX512 = false

// UseAVX512 is false: callers take their generic paths.
var UseAVX512 = false

// FMA6x32 panics: there is no assembly kernel on this architecture.
func FMA6x32(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int) {
	panic("kernel: FMA6x32 without an assembly kernel")
}

// ScaleMax panics: there is no assembly kernel on this architecture.
func ScaleMax(s *float32, n int, scale float32) float32 {
	panic("kernel: ScaleMax without an assembly kernel")
}

// ExpSum panics: there is no assembly kernel on this architecture.
func ExpSum(s *float32, n int, m float32) float64 {
	panic("kernel: ExpSum without an assembly kernel")
}

// GELUTanh panics: there is no assembly kernel on this architecture.
func GELUTanh(x *float32, n int) { panic("kernel: GELUTanh without an assembly kernel") }
