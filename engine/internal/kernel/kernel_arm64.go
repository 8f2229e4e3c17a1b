// kernel_arm64.go: the Go declaration of the NEON micro-kernel (every arm64 CPU has NEON with
// fused multiply-add: AArch64 makes Advanced SIMD mandatory).
//
// Invariant: as on amd64, UseFMA is decided once, at package init, and never from a shape.
// Mutation that would silently break it: see kernel_amd64.go.
package kernel

import "unsafe"

// HasFMA: every arm64 CPU can run FMA6x16 (NEON is part of AArch64). Nothing may write it.
var HasFMA = true

// UseFMA selects the FMA6x16 paths; tests flip it to run the generic paths too.
var UseFMA = HasFMA

// FMA6x16 is implemented in kernel_arm64.s; the contract is kernel_amd64.s's.
//
//go:noescape
func FMA6x16(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)
