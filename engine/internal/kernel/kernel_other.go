//go:build !amd64 && !arm64

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
