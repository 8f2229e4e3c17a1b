package cpu

import (
	"fmt"
	"math/rand/v2"
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
