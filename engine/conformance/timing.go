package conformance

// timing.go: what each kernel takes at a real model's shapes, as the backend reports it
// (a GPU backend: its command buffer's GPU start to end; the CPU: the op's own wall time).
// Each op runs alone in its own pass: once to warm up, then Reps times; the fastest counts.
//
// Invariant: a pass holds exactly the op it is named for. Mutation that would silently break
// it: timing without a Commit before the op — the previous op's pending work would be
// counted in this one.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// Shape is a tower's size for timing: hidden width, heads, MLP width, patches.
type Shape struct {
	Hidden, Heads, Intermediate, Patches int
}

// Qwen3VL8B is Qwen3-VL-8B's vision tower (27 blocks of these) on a 512x512 page.
var Qwen3VL8B = Shape{Hidden: 1152, Heads: 16, Intermediate: 4304, Patches: 1024}

// Reps is how many timed passes each op gets after its warm-up.
const Reps = 3

// Timing is one op's fastest pass and its arithmetic.
type Timing struct {
	Name  string
	Time  time.Duration
	FLOPs float64 // 0 where counting them means little (elementwise ops)
	Err   error
}

// GFLOPS is the op's arithmetic rate (0 without a FLOP count or a time).
func (t Timing) GFLOPS() float64 {
	if t.FLOPs == 0 || t.Time <= 0 {
		return 0
	}
	return t.FLOPs / t.Time.Seconds() / 1e9
}

// Time makes a backend, times every op of one block at shape sh with BF16 weights, and
// closes it before the weight memory is unmapped.
func Time(newBackend func() (backend.Backend, error), sh Shape) (ts []Timing, err error) {
	err = withBackend(newBackend, func(s *Suite, be backend.Backend) { ts = timeBlock(s, be, sh) })
	return ts, err
}

// linear is a BF16 weight [out, in] and bias [out] of small random values.
func linear(s *Suite, r *rand.Rand, out, in int) [2]backend.Weight {
	w, _ := s.Weight("w", RandVals(r, out*in, 0.02), dtype.BF16, 0, out, in)
	b, _ := s.Weight("b", RandVals(r, out, 0.02), dtype.BF16, 0, out)
	return [2]backend.Weight{w, b}
}

func timeBlock(s *Suite, be backend.Backend, sh Shape) []Timing {
	S, D, I, H := sh.Patches, sh.Hidden, sh.Intermediate, sh.Heads
	hd := D / H
	r := rand.New(rand.NewPCG(9, 9))
	lnW, _ := s.Weight("ln.w", RandVals(r, D, 1), dtype.BF16, 0, D)
	lnB, _ := s.Weight("ln.b", RandVals(r, D, 0.1), dtype.BF16, 0, D)
	qkvW, projW, fc1W, fc2W := linear(s, r, 3*D, D), linear(s, r, D, D), linear(s, r, I, D), linear(s, r, D, I)
	x := Upload(be, RandVals(r, S*D, 1))
	y := Alloc(be, S*D)
	qkv := Upload(be, RandVals(r, S*3*D, 1))
	att := Alloc(be, S*D)
	mid := Upload(be, RandVals(r, S*I, 1))
	cos, sin := Upload(be, RandVals(r, S*hd, 1)), Upload(be, RandVals(r, S*hd, 1))
	segs := []backend.Segment{{Start: 0, End: S}}
	scale := float32(1 / math.Sqrt(float64(hd)))
	mm := func(rows, in, out int) float64 { return 2 * float64(rows) * float64(in) * float64(out) }
	ops := []struct {
		name  string
		flops float64
		run   func()
	}{
		{fmt.Sprintf("layer_norm %dx%d", S, D), 0, func() { be.LayerNorm(y, x, lnW, lnB, S, D, 1e-6) }},
		{fmt.Sprintf("matmul qkv %dx%d->%d", S, D, 3*D), mm(S, D, 3*D), func() { be.MatMul(qkv, x, qkvW[0], qkvW[1], S, D, 3*D) }},
		{fmt.Sprintf("rope q,k %dx%dx%d", S, H, hd), 0, func() {
			be.Rope2D(qkv, 3*D, cos, sin, S, H, hd)
			be.Rope2D(qkv.At(D), 3*D, cos, sin, S, H, hd)
		}},
		{fmt.Sprintf("attention %d patches %dx%d", S, H, hd), 4 * float64(S) * float64(S) * float64(D),
			func() { be.Attention(att, qkv, qkv.At(D), qkv.At(2*D), 3*D, segs, H, hd, scale) }},
		{fmt.Sprintf("matmul proj %dx%d->%d", S, D, D), mm(S, D, D), func() { be.MatMul(y, att, projW[0], projW[1], S, D, D) }},
		{"add (residual)", 0, func() { be.Add(x, y, S*D) }},
		{fmt.Sprintf("matmul fc1 %dx%d->%d", S, D, I), mm(S, D, I), func() { be.MatMul(mid, x, fc1W[0], fc1W[1], S, D, I) }},
		{fmt.Sprintf("gelu tanh %dx%d", S, I), 0, func() { be.GELU(mid, S*I, backend.GELUTanh) }},
		{fmt.Sprintf("matmul fc2 %dx%d->%d", S, I, D), mm(S, I, D), func() { be.MatMul(y, mid, fc2W[0], fc2W[1], S, I, D) }},
	}
	var out []Timing
	for _, op := range ops {
		out = append(out, timeOp(be, op.name, op.flops, op.run))
	}
	return out
}

// timeOp runs op alone in a pass 1+Reps times and keeps the fastest time; a panic or a
// failed pass is the op's error.
func timeOp(be backend.Backend, name string, flops float64, op func()) (t Timing) {
	t = Timing{Name: name, FLOPs: flops}
	defer func() {
		if p := recover(); p != nil {
			t.Err = fmt.Errorf("panic: %v", p)
		}
	}()
	if _, err := be.Commit(); err != nil { // nothing of earlier work in this op's pass
		t.Err = err
		return t
	}
	for rep := 0; rep <= Reps; rep++ {
		op()
		d, err := be.Commit()
		if err != nil {
			t.Err = err
			return t
		}
		if rep > 0 && (t.Time == 0 || d < t.Time) {
			t.Time = d
		}
	}
	return t
}
