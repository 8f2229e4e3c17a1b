package kernel

import (
	"testing"
	"unsafe"
)

// BenchmarkFMA6x32InCache: the micro-kernel alone, x rows in L1 and the W strip in L2, one
// thread: the ceiling the packed MatMul can approach.
func BenchmarkFMA6x32InCache(b *testing.B) {
	if !HasAVX512 {
		b.Skip("no AVX-512")
	}
	const n = 1024
	x := make([]float32, 6*n)
	w := make([]float32, 32*n)
	y := make([]float32, 6*32)
	var xp, yp [6]unsafe.Pointer
	for a := range 6 {
		xp[a] = unsafe.Pointer(&x[a*n])
		yp[a] = unsafe.Pointer(&y[a*32])
	}
	b.ResetTimer()
	for range b.N {
		FMA6x32(&xp, unsafe.Pointer(&w[0]), n, &yp, 0)
	}
	b.ReportMetric(2*6*32*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
