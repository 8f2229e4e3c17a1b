//go:build !amd64

// kernel_other.go: no assembly kernel off amd64; MatMul always takes the generic path.
//
// Invariant: useFMA and hasFMA are false, so fmaKernel6x16 is never called here.
// Mutation that would silently break it: setting hasFMA to true on another architecture,
// which would route MatMul into the panicking stub below.
package cpu

import "unsafe"

var useFMA = false

var hasFMA = false

func fmaKernel6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int) {
	panic("cpu: fmaKernel6x16 without an assembly kernel")
}
