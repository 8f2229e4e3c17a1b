package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// BenchmarkPackPanel: widening fc1's BF16 weight (4304 x 1152) into FMA6x32 panels, per kernel:
// the ns per element that every MatMul call pays once per row block.
func BenchmarkPackPanel(b *testing.B) {
	const in, out = 1152, 4304
	r := rand.New(rand.NewPCG(1, 2))
	w, _ := testSuite.Weight("w", conformance.RandVals(r, in*out, 0.05), dtype.BF16, 0, out, in)
	m := &mmJob{w: w, in: in, out: out}
	kn := min(in, fmaDepth)
	p := make([]float32, fmaCols*kn)
	row := make([]float32, kn)
	kernel.EachKernel(func(name string) {
		if name == "generic" {
			return
		}
		b.Run(fmt.Sprint(name), func(b *testing.B) {
			for range b.N {
				for c0 := 0; c0+fmaCols <= out; c0 += fmaCols {
					packPanel(p, row, 2*fmaNR, m, c0, c0+fmaCols, 0)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(out/fmaCols*fmaCols*kn), "ns/elem")
		})
	})
}

// BenchmarkPackVNNIThreads: the AMX path's once-a-pass pack (packVNNITiles, as vnniWeight's
// fill runs it) on 1 to NumCPU threads, the source fc1-sized BF16 weights (9.9 MB each) packed
// in turn: 12 (src113MB, MiB: in a large L3) or 48 (src453MB: from memory, as a pass's first
// read of a block's weights is). The GB/s of weight packed say whether the pack scales with
// threads or is bound by the memory they share.
func BenchmarkPackVNNIThreads(b *testing.B) {
	const in, out = 1152, 4304
	r := rand.New(rand.NewPCG(1, 2))
	vals := conformance.RandVals(r, in*out, 0.05)
	var jobs []*mmJob
	kc, nbs := chunks(in, amxK), chunks(out, amxBlock)
	dst := make([]uint16, 2*nbs*kc*amxVNNI)
	for _, weights := range []int{12, 48} {
		for len(jobs) < weights {
			w, _ := testSuite.Weight(fmt.Sprint("w", len(jobs)), vals, dtype.BF16, 0, out, in)
			jobs = append(jobs, &mmJob{w: w, in: in, out: out})
		}
		for threads := 1; threads <= runtime.NumCPU(); threads *= 2 {
			b.Run(fmt.Sprintf("src%dMB/threads%d", weights*2*in*out>>20, threads), func(b *testing.B) {
				be := New(threads)
				defer be.Close()
				for i := range b.N {
					be.packVNNITiles(jobs[i%weights], dst, kc, nbs)
				}
				b.ReportMetric(float64(2*in*out)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GB/s")
			})
		}
	}
}
