// helpers_test.go: random inputs and weights for the op tests.
//
// Invariant: a test weight holds exactly the bits the reference widens (the reference reads the
// encoded bytes back through safetensors.DecodeF32, never the float32 values before rounding).
// Mutation that would silently break it: comparing a BF16 run against the unrounded float32
// values, which hides a decode bug under the bf16 rounding error.
package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/safetensors"
)

var regionIDs int

// makeWeight encodes vals as dtype d at byte offset skew inside a fresh region, and returns
// the weight together with the values the reference must use (vals rounded to d).
func makeWeight(name string, vals []float32, d safetensors.DType, skew int, shape ...int) (engine.Weight, []float32) {
	raw := safetensors.EncodeF32(make([]byte, skew, skew+len(vals)*d.Size()), vals, d)
	regionIDs++
	w := engine.Weight{
		Name:   name,
		DType:  d,
		Shape:  shape,
		Region: &engine.Region{ID: regionIDs, Bytes: raw},
		Offset: skew,
	}
	widened := make([]float32, len(vals))
	safetensors.DecodeF32(widened, raw[skew:], d)
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
func upload(t testing.TB, be engine.Backend, vals []float32) engine.View {
	t.Helper()
	buf, err := be.Alloc(len(vals))
	if err != nil {
		t.Fatal(err)
	}
	v := engine.View{Buf: buf}
	be.Upload(v, vals)
	return v
}

func alloc(t testing.TB, be engine.Backend, n int) engine.View {
	t.Helper()
	buf, err := be.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	return engine.View{Buf: buf}
}

func download(be engine.Backend, v engine.View, n int) []float32 {
	out := make([]float32, n)
	be.Download(out, v)
	return out
}

// cuts returns the consecutive segments [b0,b1), [b1,b2), ... (cu_seqlens style).
func cuts(bounds ...int) []engine.Segment {
	var s []engine.Segment
	for i := 1; i < len(bounds); i++ {
		s = append(s, engine.Segment{Start: bounds[i-1], End: bounds[i]})
	}
	return s
}
