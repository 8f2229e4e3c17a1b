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

// BenchmarkAMXScoresInCache: the attention score kernel alone, 8 blocks of 32 keys by a block
// of 32 queries at head dim 72 (3 chunks), everything in L1/L2, one thread; GFLOP/s count
// 2*256*32*72.
func BenchmarkAMXScoresInCache(b *testing.B) {
	if !HasAMX {
		b.Skip("no AMX")
	}
	const chunks = 3
	const blocks = 8 // a key tile of 256
	kp := make([]uint16, blocks*chunks*3072)
	qp := make([]uint16, chunks*3072)
	s := make([]float32, blocks*32*32)
	b.ResetTimer()
	for range b.N {
		AMXScores32x32(&kp[0], &qp[0], chunks, blocks, &s[0], 128, &AMXTileConfig)
	}
	b.ReportMetric(2*blocks*32*32*72*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
