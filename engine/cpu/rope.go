// rope.go: 2D rotary embedding, in place on q or k (never v), HALVES convention.
//
// Invariant: within each head, element i < hd/2 pairs with i+hd/2 at the same angle
// (rotate_half, NeoX), with cos/sin rows [seq, hd] shared by every head:
//
//	x'[i] = x[i]*cos[i] - x[i+hd/2]*sin[i],   x'[i+hd/2] = x[i+hd/2]*cos[i+hd/2] + x[i]*sin[i+hd/2].
//
// Each product is rounded to float32 before the add (float32(a*c): the Go spec lets a compiler
// fuse a*c - b*s unless a conversion rounds the product, and Go on arm64 does), so the bits are
// the same on amd64 and arm64.
// Mutation that would silently break it: the interleaved (GPT-J) pairing of (2i, 2i+1). It
// keeps norms and shapes, so a model runs fluently on it; the parity test with random
// (not angle-structured) cos/sin catches it.
package cpu

import (
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// Rope2D rotates the heads*headDim columns of seq rows of x (row stride stride) in place.
func (b *Backend) Rope2D(x backend.View, stride int, cos, sin backend.View, seq, heads, headDim int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq < 0 || heads <= 0 || headDim <= 0 || headDim%2 != 0 || stride < heads*headDim {
		panic(fmt.Sprintf("cpu: Rope2D: bad shape seq %d heads %d headDim %d stride %d", seq, heads, headDim, stride))
	}
	n := backend.Strided(seq, stride, heads*headDim)
	xs := span(x, n, "Rope2D x")
	cs := span(cos, seq*headDim, "Rope2D cos")
	ss := span(sin, seq*headDim, "Rope2D sin")
	noOverlap("Rope2D", x, n, cos, seq*headDim)
	noOverlap("Rope2D", x, n, sin, seq*headDim)
	per := max(1, 4096/(heads*headDim)) // rows per task
	rotate := ropeHead
	if kernel.UseFMA && kernel.UseAVX512 { // fixed at start-up; the same bits (rounded products)
		rotate = ropeHeadAVX512
	}
	b.parallel(chunks(seq, per), func(_, t int) {
		for s := t * per; s < min(seq, (t+1)*per); s++ {
			c := cs[s*headDim : (s+1)*headDim]
			sn := ss[s*headDim : (s+1)*headDim]
			for h := range heads {
				off := s*stride + h*headDim
				rotate(xs[off:off+headDim], c, sn)
			}
		}
	})
}

// ropeHeadAVX512 is ropeHead through kernel.RopeHalves, 16 pairs at a time.
func ropeHeadAVX512(x, cos, sin []float32) {
	if half := len(x) / 2; half > 0 {
		_, _ = cos[2*half-1], sin[2*half-1]
		kernel.RopeHalves(&x[0], &cos[0], &sin[0], half)
	}
}

// ropeHead rotates one head: HALVES here, i with i+hd/2, never (2i, 2i+1).
func ropeHead(x, cos, sin []float32) {
	half := len(x) / 2
	lo, hi := x[:half], x[half:2*half]
	cl, ch := cos[:half], cos[half:2*half]
	sl, sh := sin[:half], sin[half:2*half]
	for i := range lo {
		a, b := lo[i], hi[i]
		lo[i] = float32(a*cl[i]) - float32(b*sl[i])
		hi[i] = float32(b*ch[i]) + float32(a*sh[i])
	}
}
