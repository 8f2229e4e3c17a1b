package tower

// optimer.go times each primitive of a synchronous backend (the CPU backend runs each op at
// once, so the wall time around a call is the op's time). A GPU backend only times passes
// (Commit), so it is not wrapped.
//
// Invariant: the wrapper forwards every call unchanged; it only reads the clock. The
// mutation that would silently break it: forwarding GELU with a fixed form.

import (
	"time"

	"github.com/turbospark/inspector/engine/backend"
)

// OpTimes is the time spent per op kind ("matmul", "attention", ...).
type OpTimes map[string]time.Duration

type opTimer struct {
	backend.Backend
	times OpTimes
}

func newOpTimer(b backend.Backend) *opTimer { return &opTimer{Backend: b, times: OpTimes{}} }

// take returns the times gathered since the last take.
func (o *opTimer) take() OpTimes {
	t := o.times
	o.times = OpTimes{}
	return t
}

func (o *opTimer) since(op string, start time.Time) { o.times[op] += time.Since(start) }

func (o *opTimer) LayerNorm(out, x backend.View, w, b backend.Weight, rows, cols int, eps float32) {
	defer o.since("layernorm", time.Now())
	o.Backend.LayerNorm(out, x, w, b, rows, cols, eps)
}

func (o *opTimer) RMSNorm(out, x backend.View, w backend.Weight, rows, cols int, eps float32) {
	defer o.since("layernorm", time.Now()) // the norms share one entry
	o.Backend.RMSNorm(out, x, w, rows, cols, eps)
}

// packTimer is a backend that packs weights inside MatMul and says how long it took (the CPU
// backend): the timer shows that as "pack", apart from "matmul".
type packTimer interface{ TakePackTime() time.Duration }

// matmulSince records a matrix product started at start: its packing as "pack", the rest as
// "matmul".
func (o *opTimer) matmulSince(start time.Time) {
	d := time.Since(start)
	if pt, ok := o.Backend.(packTimer); ok {
		p := pt.TakePackTime()
		o.times["pack"] += p
		d -= p
	}
	o.times["matmul"] += d
}

func (o *opTimer) MatMul(y, x backend.View, w backend.Weight, bias backend.Weight, rows, in, out int) {
	defer o.matmulSince(time.Now())
	o.Backend.MatMul(y, x, w, bias, rows, in, out)
}

func (o *opTimer) MatMulEpilogue(y, x backend.View, w backend.Weight, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	defer o.matmulSince(time.Now()) // its GELU and residual add included where fused
	o.Backend.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
}

func (o *opTimer) Rope2D(x backend.View, stride int, cos, sin backend.View, seq, heads, headDim int) {
	defer o.since("rope", time.Now())
	o.Backend.Rope2D(x, stride, cos, sin, seq, heads, headDim)
}

func (o *opTimer) Attention(out, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	defer o.since("attention", time.Now())
	o.Backend.Attention(out, q, k, v, stride, segs, heads, headDim, scale)
}

func (o *opTimer) GELU(x backend.View, n int, form backend.GELUForm) {
	defer o.since("gelu", time.Now())
	o.Backend.GELU(x, n, form)
}

func (o *opTimer) Add(dst, src backend.View, n int) {
	defer o.since("add", time.Now())
	o.Backend.Add(dst, src, n)
}

func (o *opTimer) FillColumns(x backend.View, rows, stride, c0, c1 int, mean bool) {
	defer o.since("ablate", time.Now())
	o.Backend.FillColumns(x, rows, stride, c0, c1, mean)
}

func (o *opTimer) Mul(dst, src backend.View, n int) {
	defer o.since("mul", time.Now())
	o.Backend.Mul(dst, src, n)
}
