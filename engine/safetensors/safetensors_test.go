package safetensors

import (
	"math"
	"path/filepath"
	"testing"
)

// Every half round-trips exactly, and narrowing rounds to nearest even.
func TestHalfConversions(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := F32ToF16(f); back != uint16(h) {
			t.Fatalf("f16 %#04x -> %v -> %#04x", h, f, back)
		}
	}
	for _, c := range []struct {
		f    float32
		bf16 uint16
	}{
		{1, 0x3f80}, {-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // halfway, even below: down
		{math.Float32frombits(0x3f818000), 0x3f82}, // halfway, odd below: up
		{math.Float32frombits(0x3f808001), 0x3f81}, // past halfway: up
	} {
		if got := F32ToBF16(c.f); got != c.bf16 {
			t.Errorf("bf16(%v) = %#04x, want %#04x", c.f, got, c.bf16)
		}
	}
	if F32ToF16(70000) != 0x7c00 || F32ToF16(1.0/(1<<24)) != 1 || F32ToF16(1.0/(1<<26)) != 0 {
		t.Error("f16 overflow or subnormal rounding")
	}
}

// What the writer writes, the reader reads back, in every float dtype.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	vals := []float32{0, 1, -1.5, 3.25, 1e-3, -65504}
	specs := []Spec{{"a", F32, []int{2, 3}}, {"b", BF16, []int{6}}, {"c", F16, []int{3, 2}}}
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
			if got[i] != v && !(s.DType == BF16 && math.Abs(float64(got[i]-v)) <= math.Abs(float64(v))/128) &&
				!(s.DType == F16 && math.Abs(float64(got[i]-v)) <= math.Abs(float64(v))/1024) {
				t.Errorf("%s[%d] = %v, wrote %v", s.Name, i, got[i], v)
			}
		}
	}
}

// The writer refuses out-of-order or wrongly sized tensors and unwritten ones.
func TestWriterChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	w, _ := Create(path, []Spec{{"a", F32, []int{2}}, {"b", F32, []int{1}}}, nil)
	if err := w.Write("b", make([]byte, 4)); err == nil {
		t.Error("out-of-order write accepted")
	}
	w, _ = Create(path, []Spec{{"a", F32, []int{2}}}, nil)
	if err := w.Write("a", make([]byte, 4)); err == nil {
		t.Error("short tensor accepted")
	}
	w, _ = Create(path, []Spec{{"a", F32, []int{2}}}, nil)
	if err := w.Close(); err == nil {
		t.Error("close with an unwritten tensor succeeded")
	}
}
