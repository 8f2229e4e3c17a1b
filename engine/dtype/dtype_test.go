package dtype

import (
	"math"
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
