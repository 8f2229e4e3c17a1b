// amx_test.go: the AMX path (BF16 weights on the tile unit) beside the FMA path.
//
// Invariant: the AMX path is taken for BF16 weights only; it is at least as accurate as the
// FMA chain against float64; a call never reads what an earlier call left in the split
// buffer. (Row cuts, thread counts, misaligned weights and parity run through it in the
// kernel table: forEachKernel's "amx".)
// Mutation that would silently break it: splitRows not zeroing a short chunk's padded k
// (TestAMXMatMulPadding), or the split without its lo piece (TestAMXAccuracy).
package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

func needAMX(t *testing.T) {
	t.Helper()
	if !kernel.HasAMX {
		t.Skip("no AMX in this process (CPU, OS or architecture)")
	}
}

// withAMX runs f with kernel.UseAMX set to on (the AVX-512 kernels on) and restores it.
func withAMX(on bool, f func()) {
	saved, s512, sfma := kernel.UseAMX, kernel.UseAVX512, kernel.UseFMA
	defer func() { kernel.UseAMX, kernel.UseAVX512, kernel.UseFMA = saved, s512, sfma }()
	kernel.UseAMX, kernel.UseAVX512, kernel.UseFMA = on, true, true
	f()
}

// TestAMXMatMulPadding: a call after one whose x was all NaN, with a longer short k chunk and
// more rows, gives the bits of the same call on a fresh backend: the padded k are zeros of
// this call, not what the last call left in scratch.
func TestAMXMatMulPadding(t *testing.T) {
	needAMX(t)
	withAMX(true, func() {
		r := rand.New(rand.NewPCG(9, 10))
		const rows, in, out = 33, 40, 45
		w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), dtype.BF16, 0, out, in)
		xv := conformance.RandVals(r, rows*in, 1)
		want := matMulWith(t, true, xv, w, backend.Weight{}, rows, in, out) // a fresh backend's

		be := New(2)
		defer be.Close()
		const wideRows, wideIn = 64, 60 // a longer short chunk than in's: its NaN tail outlives the call
		nan := make([]float32, wideRows*wideIn)
		for i := range nan {
			nan[i] = float32(math.NaN())
		}
		w2, _ := testSuite.Weight("w2", conformance.RandVals(r, out*wideIn, 0.1), dtype.BF16, 0, out, wideIn)
		be.MatMul(conformance.Alloc(be, wideRows*out), conformance.Upload(be, nan), w2, backend.Weight{}, wideRows, wideIn, out)
		y := conformance.Alloc(be, rows*out)
		be.MatMul(y, conformance.Upload(be, xv), w, backend.Weight{}, rows, in, out)
		if i, ok := sameBits(want, conformance.Download(be, y, rows*out)); !ok {
			t.Errorf("element %d differs from a fresh backend's (the last call's pieces were read)", i)
		}
	})
}

// TestAMXAccuracy: against float64, the AMX path's mean error (relative to sum |x*w| of each
// output) is at most the FMA chain's on the same data (measured: a third of it); a split
// without its lo piece errs ~100 times more.
func TestAMXAccuracy(t *testing.T) {
	needAMX(t)
	r := rand.New(rand.NewPCG(11, 12))
	const rows, in, out = 70, 1153, 90
	w, wf := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.05), dtype.BF16, 0, out, in)
	xv := conformance.RandVals(r, rows*in, 1)
	meanErr := func(amx bool) (mean float64) {
		withAMX(amx, func() {
			be := New(2)
			defer be.Close()
			y := conformance.Alloc(be, rows*out)
			be.MatMul(y, conformance.Upload(be, xv), w, backend.Weight{}, rows, in, out)
			got := conformance.Download(be, y, rows*out)
			for i, v := range got {
				row, o := i/out, i%out
				exact, scale := 0.0, 0.0
				for k := range in {
					p := float64(xv[row*in+k]) * float64(wf[o*in+k])
					exact += p
					scale += math.Abs(p)
				}
				mean += math.Abs(float64(v)-exact) / scale / float64(len(got))
			}
		})
		return mean
	}
	amx, fma := meanErr(true), meanErr(false)
	t.Logf("mean error of the scale: amx %.3g, fma %.3g", amx, fma)
	if !(amx <= fma) {
		t.Errorf("AMX mean error %.3g above the FMA chain's %.3g", amx, fma)
	}
}

// TestAMXOnlyForBF16: F32 and F16 weights give the FMA path's bits with UseAMX on.
func TestAMXOnlyForBF16(t *testing.T) {
	needAMX(t)
	for _, d := range []dtype.DType{dtype.F32, dtype.F16} {
		var got [2][]float32
		for i, on := range []bool{false, true} {
			withAMX(on, func() {
				be := New(2)
				defer be.Close()
				got[i], _ = conformance.MatMul(d, 40, 300, 70, true, 0).Run(testSuite, be)
			})
		}
		if i, ok := sameBits(got[0], got[1]); !ok {
			t.Errorf("%s: element %d changed with UseAMX", d, i)
		}
	}
}

// TestAMXShortBlocksCarry: on one thread a task takes two column blocks, so a short row block's
// blocks share one scratch tile across k-blocks (in 1,153: two); each must carry its own sums
// (from y), not the tile's last contents. Parity with float64 at MatMul's tolerance.
func TestAMXShortBlocksCarry(t *testing.T) {
	needAMX(t)
	withAMX(true, func() {
		r := rand.New(rand.NewPCG(13, 14))
		const rows, in, out = 33, 1153, 100
		w, wf := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), dtype.BF16, 0, out, in)
		bias, bf := testSuite.Weight("b", conformance.RandVals(r, out, 0.5), dtype.BF16, 0, out)
		xv := conformance.RandVals(r, rows*in, 1)
		be := New(1)
		defer be.Close()
		y := conformance.Alloc(be, rows*out)
		be.MatMul(y, conformance.Upload(be, xv), w, bias, rows, in, out)
		got := conformance.Download(be, y, rows*out)
		if d, ok := parityOK(got, conformance.RefMatMul(xv, wf, bf, rows, in, out), conformance.TolMatMul); !ok {
			t.Errorf("RelDiff %.3g against float64", d)
		}
	})
}

// TestAMXCancelled: a call under a cancelled context returns (its output is not to be read),
// leaves no half-packed weight in the cache, and the same call afterwards gives a fresh
// backend's bits.
func TestAMXCancelled(t *testing.T) {
	needAMX(t)
	withAMX(true, func() {
		r := rand.New(rand.NewPCG(15, 16))
		const rows, in, out = 70, 300, 130
		w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), dtype.BF16, 0, out, in)
		xv := conformance.RandVals(r, rows*in, 1)
		want := matMulWith(t, true, xv, w, backend.Weight{}, rows, in, out) // a fresh backend's

		be := New(2)
		defer be.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		be.Bind(ctx)
		x := conformance.Upload(be, xv)
		y := conformance.Alloc(be, rows*out)
		be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
		be.Bind(context.Background())
		be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
		if i, ok := sameBits(want, conformance.Download(be, y, rows*out)); !ok {
			t.Errorf("after a cancelled call, element %d differs from a fresh backend's", i)
		}
	})
}
