// bench_test.go: MatMul and Attention throughput at the model's shapes.
//
// Invariant: the reported GFLOP/s counts 2*rows*in*out (MatMul) and 4*seq^2*heads*hd
// (Attention: QK^T and PV) per op, nothing else.
// Mutation that would silently break it: counting multiply-adds as one flop, which halves every
// number and makes comparisons with BLAS figures meaningless.
package cpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

func BenchmarkMatMul(b *testing.B) {
	shapes := [][3]int{{1024, 1152, 4304}, {1024, 4304, 1152}, {1024, 1152, 3456}}
	for _, d := range []dtype.DType{dtype.F32, dtype.BF16} {
		for _, s := range shapes {
			rows, in, out := s[0], s[1], s[2]
			b.Run(fmt.Sprintf("%s/%dx%dx%d", d, rows, in, out), func(b *testing.B) {
				be := New(0)
				defer be.Close()
				r := rand.New(rand.NewPCG(1, 2))
				w, _ := testSuite.Weight("w", conformance.RandVals(r, in*out, 0.05), d, 0, out, in)
				bias, _ := testSuite.Weight("b", conformance.RandVals(r, out, 0.05), d, 0, out)
				x := conformance.Upload(be, conformance.RandVals(r, rows*in, 1))
				y := conformance.Alloc(be, rows*out)
				b.ResetTimer()
				for range b.N {
					be.MatMul(y, x, w, bias, rows, in, out)
				}
				flops := 2 * float64(rows) * float64(in) * float64(out) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkAttention(b *testing.B) {
	const seq, heads, hd = 1024, 16, 72
	be := New(0)
	defer be.Close()
	r := rand.New(rand.NewPCG(3, 4))
	D := heads * hd
	qkv := conformance.Upload(be, conformance.RandVals(r, seq*3*D, 1))
	o := conformance.Alloc(be, seq*D)
	segs := []backend.Segment{{Start: 0, End: seq}}
	b.ResetTimer()
	for range b.N {
		be.Attention(o, qkv, qkv.At(D), qkv.At(2*D), 3*D, segs, heads, hd, 1/float32(8.485281374238571))
	}
	flops := 4 * float64(seq) * float64(seq) * float64(heads) * float64(hd) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMatMulKernels: the block's GEMM shapes at 1,024 rows, bf16 weights, through every
// kernel this CPU has (generic, AVX2, AVX-512), one run, so the ratios hold on a noisy machine.
func BenchmarkMatMulKernels(b *testing.B) {
	shapes := [][3]int{{1024, 1152, 4304}, {1024, 4304, 1152}, {5120, 1152, 3456}, {5120, 1152, 1152}}
	if s := os.Getenv("TS_BENCH_SHAPES"); s == "5120" {
		shapes = shapes[2:]
	}
	for _, s := range shapes {
		rows, in, out := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(1, 2))
		w, _ := testSuite.Weight("w", conformance.RandVals(r, in*out, 0.05), dtype.BF16, 0, out, in)
		xv := conformance.RandVals(r, rows*in, 1)
		kernel.EachKernel(func(name string) {
			if name == "generic" && rows > 1024 {
				return // tens of seconds per call: the 1,024-row shapes show its rate
			}
			b.Run(fmt.Sprintf("%s/%dx%dx%d", name, rows, in, out), func(b *testing.B) {
				be := New(0)
				defer be.Close()
				x := conformance.Upload(be, xv)
				y := conformance.Alloc(be, rows*out)
				b.ResetTimer()
				for range b.N {
					be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
				}
				flops := 2 * float64(rows) * float64(in) * float64(out) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// BenchmarkAttentionKernels: one image of seq patches, 16 heads of 72, through every kernel
// this CPU has, one run (GFLOP/s counts 4*seq^2*heads*hd).
func BenchmarkAttentionKernels(b *testing.B) {
	const heads, hd = 16, 72
	for _, seq := range []int{1024, 5120} {
		r := rand.New(rand.NewPCG(3, 4))
		D := heads * hd
		qkvv := conformance.RandVals(r, seq*3*D, 1)
		segs := []backend.Segment{{Start: 0, End: seq}}
		kernel.EachKernel(func(name string) {
			if name == "generic" && seq > 1024 {
				return // minutes per run
			}
			b.Run(fmt.Sprintf("%s/seq%d", name, seq), func(b *testing.B) {
				be := New(0)
				defer be.Close()
				qkv := conformance.Upload(be, qkvv)
				o := conformance.Alloc(be, seq*D)
				b.ResetTimer()
				for range b.N {
					be.Attention(o, qkv, qkv.At(D), qkv.At(2*D), 3*D, segs, heads, hd, 1/float32(8.485281374238571))
				}
				flops := 4 * float64(seq) * float64(seq) * float64(heads) * float64(hd) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}
