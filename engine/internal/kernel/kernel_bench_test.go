package kernel

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
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

// BenchmarkFMA6x32Threads: the micro-kernel on 1, 2, 4, ... threads at once, each on its own
// L1-resident x rows and W strip (k = 72, attention's score shape; 252, its P.V shape),
// GFLOP/s a thread: the FMA ceiling per core as more cores run, which bounds how an FMA-bound
// op can scale on the machine (frequency and shared cores show here, not in one thread).
func BenchmarkFMA6x32Threads(b *testing.B) {
	if !HasAVX512 {
		b.Skip("no AVX-512")
	}
	for _, n := range []int{72, 252} {
		for threads := 1; threads <= runtime.NumCPU(); threads *= 2 {
			b.Run(fmt.Sprintf("k%d/threads%d", n, threads), func(b *testing.B) {
				onThreads(b, threads, func() func() {
					x := randF32(6 * n) // random, not zeros: the core's power, so its clock, depends on the data
					w := randF32(32 * n)
					y := make([]float32, 6*32)
					var xp, yp [6]unsafe.Pointer
					for a := range 6 {
						xp[a] = unsafe.Pointer(&x[a*n])
						yp[a] = unsafe.Pointer(&y[a*32])
					}
					return func() { FMA6x32(&xp, unsafe.Pointer(&w[0]), n, &yp, 1) }
				})
				b.ReportMetric(2*6*32*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s/thread")
			})
		}
	}
}

// randF32 returns n float32 values of a unit normal.
func randF32(n int) []float32 {
	r := rand.New(rand.NewPCG(uint64(n), 2))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// onThreads runs b.N calls of a body on each of threads goroutines at once, each locked to an
// OS thread, with its data made by prepare on that thread before the clock starts.
func onThreads(b *testing.B, threads int, prepare func() (body func())) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			body := prepare()
			<-start
			for range b.N {
				body()
			}
		})
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
}
