// ceiling.go: the machine's own compute ceiling for this backend's kernels: each unit the
// engine's products run on (the widest FMA micro-kernel it uses; the AMX tile unit where the
// AMX path is on), run on n threads at once, each on data in its own L1/L2, GFLOP/s a thread.
// It is what a kernel could reach on n cores if memory cost nothing, so it bounds how an op on
// that unit can scale: a 2 -> 16 thread speed-up is judged against 8 x (the 16-thread rate /
// the 2-thread rate) of the same machine, measured in the same run (make bench's pairs).
//
// Invariant: a rate counts the float32 product's flops of the calls every thread completed,
// over the wall time from the common start to the last thread's stop, divided by n: a thread
// that ran slow (a shared core, a lower clock under load) lowers the rate, as it would an op.
// The data are random (the cores' power, so their clocks, depend on the data; zeros would
// flatter the units), made by each thread on its own thread before the clock starts.
// Mutation that would silently break it: timing each thread on its own clock and averaging,
// which hides a thread that started late or was descheduled (the loop an op waits for).
package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/turbospark/inspector/engine/internal/kernel"
)

// UnitRate is one unit's ceiling on Threads threads at once.
type UnitRate struct {
	Unit            string  `json:"unit"` // the kernel: fma6x32 (AVX-512), fma6x16 (AVX2/NEON), amx (bf16 tiles, float32 accuracy)
	Threads         int     `json:"threads"`
	GFLOPsPerThread float64 `json:"gflops_per_thread"`
}

// ceilingUnit is one kernel run for the ceiling: flops per call, and a body made on its thread.
type ceilingUnit struct {
	name    string
	flops   float64
	prepare func() (body func())
}

// ceilingK is the FMA kernels' k per call: attention's P.V shape (its score shape is 72): x's 6
// rows and W's strip (38 KiB for FMA6x32) stay in L1.
const ceilingK = 252

// ceilingChunks is the AMX products' k chunks per call, as the AMX GEMM's k-block (amxDepth).
const ceilingChunks = amxDepth

// ceilingUnits lists the units this machine's engine runs its products on.
func ceilingUnits() []ceilingUnit {
	var units []ceilingUnit
	switch {
	case kernel.HasAVX512:
		units = append(units, fmaUnit("fma6x32", 32, kernel.FMA6x32))
	case kernel.HasFMA:
		units = append(units, fmaUnit("fma6x16", 16, kernel.FMA6x16))
	}
	if kernel.HasAMX {
		units = append(units, ceilingUnit{
			name: "amx",
			// AMXProducts does the 32 x 32 block's 3 piece products a chunk: the float32
			// product's 2*32*32*32 flops a chunk, as the AMX GEMM's GFLOP/s count them.
			flops: 2 * 32 * 32 * amxK * ceilingChunks,
			prepare: func() func() {
				a := randomBF16(ceilingChunks * amxChunk)
				w := randomBF16(2 * ceilingChunks * amxVNNI)
				c := make([]float32, amxBlock*amxBlock)
				return func() {
					kernel.AMXProducts(&a[0], &w[0], &w[ceilingChunks*amxVNNI], ceilingChunks, &c[0], 4*amxBlock, &kernel.AMXTileConfig)
				}
			},
		})
	}
	return units
}

// fmaUnit is an FMA micro-kernel of lanes columns and 6 rows over k = ceilingK.
func fmaUnit(name string, lanes int, fma func(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int)) ceilingUnit {
	return ceilingUnit{
		name:  name,
		flops: float64(2 * 6 * lanes * ceilingK),
		prepare: func() func() {
			x := randomF32(6 * ceilingK)
			w := randomF32(lanes * ceilingK)
			y := make([]float32, 6*lanes)
			var xp, yp [6]unsafe.Pointer
			for a := range 6 {
				xp[a] = unsafe.Pointer(&x[a*ceilingK])
				yp[a] = unsafe.Pointer(&y[a*lanes])
			}
			return func() { fma(&xp, unsafe.Pointer(&w[0]), ceilingK, &yp, 1) }
		},
	}
}

// Ceiling runs each of this machine's units on threads threads at once for about d each and
// returns their rates, in ceilingUnits' order. Cancelling ctx stops the runs early (the rates
// so far are still true, over a shorter time).
func Ceiling(ctx context.Context, threads int, d time.Duration) []UnitRate {
	var rates []UnitRate
	for _, u := range ceilingUnits() {
		calls, wall := u.run(ctx, threads, d)
		rates = append(rates, UnitRate{Unit: u.name, Threads: threads, GFLOPsPerThread: u.flops * float64(calls) / wall.Seconds() / 1e9 / float64(threads)})
	}
	return rates
}

// run calls u's body on threads goroutines at once, each locked to an OS thread, from a
// common start until d has passed (or ctx is done): the calls all threads completed and the
// wall time to the last one's stop.
func (u ceilingUnit) run(ctx context.Context, threads int, d time.Duration) (calls int64, wall time.Duration) {
	var (
		ready, done sync.WaitGroup
		stop        atomic.Bool
		total       atomic.Int64
	)
	start := make(chan struct{})
	for range threads {
		ready.Add(1)
		done.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			body := u.prepare()
			body() // the first call: caches and, for AMX, the tile state
			ready.Done()
			<-start
			var n int64
			for !stop.Load() {
				for range 16 { // a batch: 16 calls are 10-100 us, so the stop is seen at once
					body()
				}
				n += 16
			}
			total.Add(n)
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	done.Wait()
	return total.Load(), time.Since(t0)
}

// randomF32 returns n values of a unit normal.
func randomF32(n int) []float32 {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// randomBF16 returns n bfloat16 values of a unit normal (randomF32's, truncated).
func randomBF16(n int) []uint16 {
	v := make([]uint16, n)
	for i, f := range randomF32(n) {
		v[i] = uint16(math.Float32bits(f) >> 16)
	}
	return v
}
