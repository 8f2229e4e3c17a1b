package cpu

import (
	"encoding/binary"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// TestPackVNNITiles: every tile of a packed BF16 weight holds, at chunk c row p, W[16t+j, 2p+e]
// at 2j+e (p counting the tile's k pairs from chunk 0), and zero for rows past out and k past
// in: weights with an even and an odd in, an out that leaves a short last tile, and weights at
// byte offsets that are multiples of 2 but not of 4. Runs wherever the AVX-512 kernels do (the
// packing needs no AMX).
func TestPackVNNITiles(t *testing.T) {
	if !kernel.HasAVX512 {
		t.Skip("no AVX-512")
	}
	for _, sh := range [][3]int{{40, 96, 0}, {37, 75, 2}, {16, 1152, 6}, {33, 66, 2}} {
		out, in, off := sh[0], sh[1], sh[2]
		raw := make([]byte, off+2*out*in+64)
		for i := range raw {
			raw[i] = byte(i*131 + 7)
		}
		m := &mmJob{w: backend.Weight{Name: "w", DType: dtype.BF16, Region: &backend.Region{Bytes: raw}, Offset: off}, in: in, out: out}
		kc := chunks(in, amxK)
		for tile := range chunks(out, 16) {
			dst := make([]uint16, kc*amxVNNI)
			for i := range dst {
				dst[i] = 0xdead
			}
			m.packVNNI(dst, 16*tile, kc)
			for p := range kc * amxK / 2 {
				for j := range 16 {
					for e := range 2 {
						o, k := 16*tile+j, 2*p+e
						want := uint16(0)
						if o < out && k < in {
							want = binary.LittleEndian.Uint16(raw[off+(o*in+k)*2:])
						}
						if got := dst[p*32+2*j+e]; got != want {
							t.Fatalf("%v tile %d pair %d row %d half %d: %#x, want %#x", sh, tile, p, j, e, got, want)
						}
					}
				}
			}
		}
	}
}
