// determinism_test.go: thread count and weight alignment never change a single bit.
//
// Invariant: for every op, New(1), New(2), New(7) and New(9) (at least poolThreads: its ops on
// a par.Pool) produce bit-identical outputs, and a weight at byte offset 1, 2 or 3 inside its
// region gives the bits of the aligned weight.
// Both tests run once per MatMul kernel (generic, and AVX2+FMA where the CPU has it).
// Mutation that would silently break it: a reduction whose chunking follows the worker count,
// or a decode fast path taken on a misaligned address (checkptr / wrong bytes).
package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
)

// bigCases are shapes that every op splits into several tasks.
func bigCases() []conformance.Case {
	segs := conformance.Cuts(0, 1, 100, 330)
	return []conformance.Case{
		conformance.MatMul(dtype.BF16, 400, 300, 130, true, 0),
		conformance.MatMul(dtype.F16, 13, 2100, 70, true, 0),
		conformance.MatMul(dtype.BF16, 1700, 200, 70, true, 0), // 1, 2 or 3 row blocks by thread count
		conformance.LayerNorm(dtype.F32, 33, 1152, 0),
		conformance.GELU(backend.GELUTanh, 40000),
		conformance.GELU(backend.GELUErf, 40000),
		conformance.Add(40000, false),
		conformance.Rope(33, 3, 72, true),
		conformance.Attention(3, 72, segs, 1),
		conformance.Attention(5, 6, segs, 1),
		conformance.Attention(2, 72, conformance.Cuts(0, 1, 100, 700), 1), // past a flash key tile
	}
}

func sameBits(a, b []float32) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

func TestThreadCountDeterminism(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		var backends []*Backend
		for _, n := range []int{1, 2, 7, 9} {
			be := New(n)
			defer be.Close()
			if be.Threads() != n {
				t.Fatalf("New(%d).Threads() = %d", n, be.Threads())
			}
			if pooled := be.pool != nil; pooled != (n >= poolThreads) {
				t.Fatalf("New(%d): on a pool %v, want %v (poolThreads %d)", n, pooled, n >= poolThreads, poolThreads)
			}
			backends = append(backends, be)
		}
		for _, c := range bigCases() {
			base, _ := c.Run(testSuite, backends[0])
			for _, be := range backends[1:] {
				got, _ := c.Run(testSuite, be)
				if i, ok := sameBits(base, got); !ok {
					t.Errorf("%s: threads %d differ from threads 1 at element %d", c.Name, be.Threads(), i)
				}
			}
		}
	})
}

func TestMisalignedWeights(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		be := New(2)
		defer be.Close()
		for _, d := range []dtype.DType{dtype.F32, dtype.BF16, dtype.F16} {
			mm, _ := conformance.MatMul(d, 7, 300, 33, true, 0).Run(testSuite, be)
			ln, _ := conformance.LayerNorm(d, 7, 100, 0).Run(testSuite, be)
			for _, skew := range []int{1, 2, 3} {
				name := fmt.Sprintf("%s/skew%d", d, skew)
				got, want := conformance.MatMul(d, 7, 300, 33, true, skew).Run(testSuite, be)
				if _, ok := sameBits(mm, got); !ok {
					t.Errorf("MatMul %s: differs from the aligned weight", name)
				}
				if _, ok := parityOK(got, want, conformance.TolMatMul); !ok {
					t.Errorf("MatMul %s: fails parity", name)
				}
				got, _ = conformance.LayerNorm(d, 7, 100, skew).Run(testSuite, be)
				if _, ok := sameBits(ln, got); !ok {
					t.Errorf("LayerNorm %s: differs from the aligned weight", name)
				}
			}
		}
	})
}

func TestDecodeMatchesSafetensors(t *testing.T) {
	raw := make([]byte, 1+2*65536)
	for h := range 65536 {
		raw[1+2*h], raw[2+2*h] = byte(h), byte(h>>8)
	}
	for _, d := range []dtype.DType{dtype.F16, dtype.BF16} {
		for _, skew := range []int{0, 1} { // byte-wise path and (when aligned) fast path
			src := raw[skew : skew+2*65536]
			if skew == 0 {
				src = append([]byte(nil), raw[1:]...) // a fresh, aligned copy
			}
			got, want := make([]float32, 65536), make([]float32, 65536)
			decode(got, src, d)
			dtype.DecodeF32(want, src, d)
			if i, ok := sameBits(got, want); !ok {
				t.Errorf("%s skew %d: bits %#04x widen to %#08x, want %#08x", d, skew, i,
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}
