// helpers_test.go: random inputs and weights for the op tests.
//
// Invariant: a test weight holds exactly the bits the reference widens (the reference reads the
// encoded bytes back through dtype.DecodeF32, never the float32 values before rounding).
// Mutation that would silently break it: comparing a BF16 run against the unrounded float32
// values, which hides a decode bug under the bf16 rounding error.
package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

var regionIDs int

// makeWeight encodes vals as dtype d at byte offset skew inside a fresh region, and returns
// the weight together with the values the reference must use (vals rounded to d).
func makeWeight(name string, vals []float32, d dtype.DType, skew int, shape ...int) (backend.Weight, []float32) {
	raw := dtype.EncodeF32(make([]byte, skew, skew+len(vals)*d.Size()), vals, d)
	regionIDs++
	w := backend.Weight{
		Name:   name,
		DType:  d,
		Shape:  shape,
		Region: &backend.Region{ID: regionIDs, Bytes: raw},
		Offset: skew,
	}
	widened := make([]float32, len(vals))
	dtype.DecodeF32(widened, raw[skew:], d)
	return w, widened
}

func randVals(r *rand.Rand, n int, scale float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64()) * scale
	}
	return s
}

// upload allocates a buffer holding vals and returns its view.
func upload(t testing.TB, be backend.Backend, vals []float32) backend.View {
	t.Helper()
	buf, err := be.Alloc(len(vals))
	if err != nil {
		t.Fatal(err)
	}
	v := backend.View{Buf: buf}
	be.Upload(v, vals)
	return v
}

func alloc(t testing.TB, be backend.Backend, n int) backend.View {
	t.Helper()
	buf, err := be.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	return backend.View{Buf: buf}
}

func download(be backend.Backend, v backend.View, n int) []float32 {
	out := make([]float32, n)
	be.Download(out, v)
	return out
}

// cuts returns the consecutive segments [b0,b1), [b1,b2), ... (cu_seqlens style).
func cuts(bounds ...int) []backend.Segment {
	var s []backend.Segment
	for i := 1; i < len(bounds); i++ {
		s = append(s, backend.Segment{Start: bounds[i-1], End: bounds[i]})
	}
	return s
}
