package safetensors

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
)

// What the writer writes, the reader reads back, in every float dtype.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	vals := []float32{0, 1, -1.5, 3.25, 1e-3, -65504}
	specs := []Spec{{"a", dtype.F32, []int{2, 3}}, {"b", dtype.BF16, []int{6}}, {"c", dtype.F16, []int{3, 2}}}
	w, err := Create(path, specs, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if err := w.WriteF32(s.Name, vals); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.DataStart%8 != 0 || f.Metadata["k"] != "v" {
		t.Errorf("data starts at %d, metadata %v", f.DataStart, f.Metadata)
	}
	for _, s := range specs {
		got, err := f.ReadF32(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if got[i] != v && !(s.DType == dtype.BF16 && math.Abs(float64(got[i]-v)) <= math.Abs(float64(v))/128) &&
				!(s.DType == dtype.F16 && math.Abs(float64(got[i]-v)) <= math.Abs(float64(v))/1024) {
				t.Errorf("%s[%d] = %v, wrote %v", s.Name, i, got[i], v)
			}
		}
	}
}

// The writer refuses out-of-order or wrongly sized tensors and unwritten ones.
func TestWriterChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	w, _ := Create(path, []Spec{{"a", dtype.F32, []int{2}}, {"b", dtype.F32, []int{1}}}, nil)
	if err := w.Write("b", make([]byte, 4)); err == nil {
		t.Error("out-of-order write accepted")
	}
	w, _ = Create(path, []Spec{{"a", dtype.F32, []int{2}}}, nil)
	if err := w.Write("a", make([]byte, 4)); err == nil {
		t.Error("short tensor accepted")
	}
	w, _ = Create(path, []Spec{{"a", dtype.F32, []int{2}}}, nil)
	if err := w.Close(); err == nil {
		t.Error("close with an unwritten tensor succeeded")
	}
}
