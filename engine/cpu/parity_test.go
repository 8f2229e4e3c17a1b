// parity_test.go: every primitive against the float64 Ref* functions of reference.go.
//
// Invariant: each case builds its inputs from a fixed seed, runs the op on an backend.Backend
// (only through the interface, so the table can hold another backend to the same references)
// and compares with RelDiff = max|got-ref|/max|ref| against a stated tolerance. Sizes are not
// multiples of the blockings (micro-kernel 3x2, k-block 2048, row block 192, column panel 64,
// attention chunk 192, elementwise chunk 16384) and segments are uneven, length 1 included.
// TestOpParity runs the table once per MatMul kernel (generic, and AVX2+FMA where the CPU has it).
// Mutation that would silently break it: sizes that are multiples of every block, which never
// run the edge code (clipped rows, odd columns, k-tails, carried k-blocks).
package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// Tolerances (RelDiff). MatMul and Attention accumulate in float32 over up to 300 terms;
// the elementwise ops round once.
const (
	tolMatMul    = 1e-5
	tolAttention = 1e-5
	tolLayerNorm = 1e-6
	tolRope      = 1e-6
	tolGELU      = 1e-6
	tolAdd       = 1e-7
)

var weightDTypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}

// opCase is one parity check: run the op on be, return what it computed and the reference.
type opCase struct {
	name string
	tol  float64
	run  func(be backend.Backend) (got []float32, want []float64)
}

// parityOK is THE parity check of this file; the mutation test calls it on wrong variants.
func parityOK(got []float32, want []float64, tol float64) (float64, bool) {
	d := RelDiff(got, want)
	return d, d <= tol
}

func opCases() []opCase {
	var cases []opCase
	for _, d := range weightDTypes {
		for _, rows := range []int{1, 7, 33, 130, 200} {
			for _, io := range [][2]int{{17, 5}, {72, 33}, {100, 130}, {300, 65}} {
				cases = append(cases, matMulCase(d, rows, io[0], io[1], true, 0))
			}
		}
		cases = append(cases, matMulCase(d, 7, 72, 33, false, 0))
		cases = append(cases, matMulCase(d, 4, 4200, 9, true, 0)) // three k-blocks, carried sums
		for _, rows := range []int{1, 7, 33} {
			for _, cols := range []int{17, 72, 100, 1152} {
				cases = append(cases, layerNormCase(d, rows, cols, 0))
			}
		}
	}
	for _, form := range []backend.GELUForm{backend.GELUTanh, backend.GELUErf} {
		for _, n := range []int{1, 7, 1000, 40000} {
			cases = append(cases, geluCase(form, n))
		}
	}
	for _, n := range []int{1, 7, 1000, 40000} {
		cases = append(cases, addCase(n))
	}
	for _, hd := range []int{6, 16, 64, 72} {
		for _, seq := range []int{1, 7, 33} {
			cases = append(cases, ropeCase(seq, 3, hd, false), ropeCase(seq, 3, hd, true))
		}
		cases = append(cases, attentionCase(3, hd, cuts(0, 1, 8, 41, 44)))
		cases = append(cases, attentionCase(3, hd, cuts(0, 200, 201, 290)))
	}
	return cases
}

func TestOpParity(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		be := New(3)
		defer be.Close()
		for _, c := range opCases() {
			got, want := c.run(be)
			if d, ok := parityOK(got, want, c.tol); !ok {
				t.Errorf("%s: RelDiff %.3g > tol %.0g", c.name, d, c.tol)
			}
		}
	})
}

// matMulCase: y = x W^T + b, W of dtype d at byte offset skew.
func matMulCase(d dtype.DType, rows, in, out int, withBias bool, skew int) opCase {
	name := fmt.Sprintf("MatMul/%s/rows%d/in%d/out%d/bias%v/skew%d", d, rows, in, out, withBias, skew)
	return opCase{name, tolMatMul, func(be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows*in), uint64(out)))
		w, wf := makeWeight("w", randVals(r, out*in, 0.1), d, skew, out, in)
		var bias backend.Weight
		var bf []float32
		if withBias {
			bias, bf = makeWeight("b", randVals(r, out, 0.5), d, skew, out)
		}
		xv := randVals(r, rows*in, 1)
		x := upload(testingTB{}, be, xv)
		y := alloc(testingTB{}, be, rows*out+3)
		be.MatMul(y.At(2), x, w, bias, rows, in, out) // offset view: Off is honoured
		got := download(be, y, rows*out+3)
		if got[0] != 0 || got[1] != 0 || got[rows*out+2] != 0 {
			return []float32{float32(math.NaN())}, []float64{0} // wrote outside y
		}
		return got[2 : rows*out+2], RefMatMul(xv, wf, bf, rows, in, out)
	}}
}

func layerNormCase(d dtype.DType, rows, cols, skew int) opCase {
	name := fmt.Sprintf("LayerNorm/%s/rows%d/cols%d/skew%d", d, rows, cols, skew)
	return opCase{name, tolLayerNorm, func(be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		w, wf := makeWeight("w", randVals(r, cols, 1), d, skew, cols)
		bias, bf := makeWeight("b", randVals(r, cols, 1), d, skew, cols)
		xv := randVals(r, rows*cols, 2)
		for i := range xv {
			xv[i] += 5 // a mean far from zero: one-pass variance would lose digits
		}
		x := upload(testingTB{}, be, xv)
		y := alloc(testingTB{}, be, rows*cols)
		be.LayerNorm(y, x, w, bias, rows, cols, 1e-6)
		return download(be, y, rows*cols), RefLayerNorm(xv, wf, bf, rows, cols, 1e-6)
	}}
}

func geluCase(form backend.GELUForm, n int) opCase {
	return opCase{fmt.Sprintf("GELU/%s/n%d", form, n), tolGELU, func(be backend.Backend) ([]float32, []float64) {
		xv := randVals(rand.New(rand.NewPCG(uint64(n), 7)), n, 3)
		x := upload(testingTB{}, be, xv)
		be.GELU(x, n, form)
		return download(be, x, n), RefGELU(xv, form)
	}}
}

func addCase(n int) opCase {
	return opCase{fmt.Sprintf("Add/n%d", n), tolAdd, func(be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(n), 8))
		a, b := randVals(r, n, 1), randVals(r, n, 1)
		x, y := upload(testingTB{}, be, a), upload(testingTB{}, be, b)
		be.Add(x, y, n)
		return download(be, x, n), RefAdd(a, b)
	}}
}

// ropeCase rotates the q (or k) part of a [seq, 3*heads*hd] qkv buffer, as the block does,
// with random cos/sin (not angle-structured, so any wrong pairing shows).
func ropeCase(seq, heads, hd int, kPart bool) opCase {
	name := fmt.Sprintf("Rope2D/seq%d/heads%d/hd%d/k%v", seq, heads, hd, kPart)
	return opCase{name, tolRope, func(be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(seq*hd), uint64(heads)))
		D := heads * hd
		qkv := randVals(r, seq*3*D, 1)
		cos, sin := randVals(r, seq*hd, 1), randVals(r, seq*hd, 1)
		x := upload(testingTB{}, be, qkv)
		off := 0
		if kPart {
			off = D
		}
		be.Rope2D(x.At(off), 3*D, upload(testingTB{}, be, cos), upload(testingTB{}, be, sin), seq, heads, hd)
		want := RefRope2D(qkv[off:], 3*D, cos, sin, seq, heads, hd)
		got := download(be, x, seq*3*D)
		for i := range off { // the part before the view must be untouched
			if got[i] != qkv[i] {
				return []float32{float32(math.NaN())}, []float64{0}
			}
		}
		return got[off:], want
	}}
}

// attentionCase runs attention on q, k, v inside one [seq, 3D] qkv buffer (stride 3D).
func attentionCase(heads, hd int, segs []backend.Segment) opCase {
	end := segs[len(segs)-1].End
	name := fmt.Sprintf("Attention/heads%d/hd%d/segs%v", heads, hd, segs)
	return opCase{name, tolAttention, func(be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(end*hd), uint64(heads)))
		D := heads * hd
		qkv := randVals(r, end*3*D, 1)
		x := upload(testingTB{}, be, qkv)
		o := alloc(testingTB{}, be, end*D)
		scale := 1 / math.Sqrt(float64(hd))
		be.Attention(o, x, x.At(D), x.At(2*D), 3*D, segs, heads, hd, float32(scale))
		want := RefAttention(qkv, qkv[D:], qkv[2*D:], 3*D, segs, heads, hd, float64(float32(scale)))
		return download(be, o, end*D), want
	}}
}

// testingTB lets the case builders call the helpers without a *testing.T: helper failures
// (Alloc errors) panic instead.
type testingTB struct{ testing.TB }

func (testingTB) Helper()           {}
func (testingTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
