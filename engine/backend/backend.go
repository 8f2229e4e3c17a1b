// Package backend is the central seam (docs/ARCHITECTURE.md): the primitives the block
// graph (engine/tower/graph.go) is written with, once, and that every backend implements — the
// CPU (engine/cpu) and Metal (metal). A backend imports only this package and engine/dtype,
// never the engine that drives it. engine/conformance holds every backend to float64
// references of each op (the CPU and Metal alike).
//
// Invariant: activations are float32 in backend-owned buffers; weights are read-only views
// of any float dtype, widened to f32 inside the op. Ops on one backend execute in call order;
// Commit ends a pass (the CPU backend runs each op at once, a GPU backend at Commit).
// Mutation that would silently break it: a backend that reorders ops across a Download (a
// GPU batching a read before the pass that writes it) — the values read are finite and stale.
package backend

import (
	"context"
	"time"

	"github.com/turbospark/inspector/engine/dtype"
)

// Buffer is float32 activation memory owned by a backend.
type Buffer interface {
	Len() int // elements
}

// View addresses a Buffer from element Off on.
type View struct {
	Buf Buffer
	Off int
}

// At returns the view moved on by n elements.
func (v View) At(n int) View { return View{v.Buf, v.Off + n} }

// Region is host memory that holds weights: a read-only window of an mmapped shard, or a
// page-aligned pread slot. A GPU backend wraps a region once (no-copy) and binds each
// weight at its byte offset, so a region's Bytes never move while it lives.
type Region struct {
	ID     int    // stable per region; backends key their wrappers on it
	Bytes  []byte // page-aligned base
	Mapped bool   // a file mapping (read-only) rather than a slot
}

// Weight is a view of one tensor inside a Region.
type Weight struct {
	Name   string // full tensor name, for messages
	DType  dtype.DType
	Shape  []int
	Region *Region
	Offset int // byte offset into Region.Bytes
}

// Elems is the number of elements of the weight.
func (w Weight) Elems() int {
	n := 1
	for _, d := range w.Shape {
		n *= d
	}
	return n
}

// Bytes is the weight's raw little-endian data.
func (w Weight) Bytes() []byte {
	return w.Region.Bytes[w.Offset : w.Offset+w.Elems()*w.DType.Size()]
}

// GELUForm selects the GELU: TANH in Qwen3-VL's block MLP, ERF in the mergers (spec sections
// 6, 7), QUICK in Qwen2-VL's block MLP.
type GELUForm int

const (
	GELUTanh  GELUForm = iota // 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), "gelu_pytorch_tanh"
	GELUErf                   // 0.5x(1+erf(x/sqrt(2))), nn.GELU()
	GELUQuick                 // x*sigmoid(1.702x), "quick_gelu"
	GELUSiLU                  // x*sigmoid(x), "silu" (Qwen2.5-VL's gate; not a GELU, an activation of the same slot)
)

func (g GELUForm) String() string {
	switch g {
	case GELUErf:
		return "erf"
	case GELUQuick:
		return "quick"
	case GELUSiLU:
		return "silu"
	}
	return "tanh"
}

// Segment is a half-open row range [Start, End) of queries that attend only to their own
// rows (one image or one temporal slice of a video), or, where KeyEnd > 0, to the key rows
// [KeyStart, KeyEnd) instead (the keys that a key mask leaves, gathered: engine/tower/graph.go).
// A segment whose own keys are meant has KeyStart = KeyEnd = 0: an empty key range never is.
type Segment struct{ Start, End, KeyStart, KeyEnd int }

// Keys is the key rows the segment's queries attend to, as a segment of its own.
func (s Segment) Keys() Segment {
	if s.KeyEnd == 0 {
		return Segment{Start: s.Start, End: s.End}
	}
	return Segment{Start: s.KeyStart, End: s.KeyEnd}
}

// Len is the number of rows of s (queries; Keys().Len() is its keys).
func (s Segment) Len() int { return s.End - s.Start }

// Caps are what a backend declares about itself (the engine never probes for methods).
type Caps struct {
	// Synchronous: every op has finished when its call returns, so the engine can time
	// each op by the wall clock (a GPU backend times whole passes instead).
	Synchronous bool
	// Threads is the number of CPU threads ops are spread over (0 for a GPU backend).
	Threads int
}

// Backend is the set of primitives the block graph is encoded with.
type Backend interface {
	Name() string
	Caps() Caps
	Alloc(n int) (Buffer, error) // zeroed
	Free(b Buffer)
	Upload(dst View, src []float32)
	Download(dst []float32, src View)

	// LayerNorm: out[r,:] = (x[r,:]-mean)/sqrt(var+eps)*w + b over cols, biased variance.
	LayerNorm(out, x View, w, b Weight, rows, cols int, eps float32)
	// RMSNorm: out[r,:] = x[r,:]/sqrt(mean(x[r,:]^2)+eps)*w over cols (Qwen2.5-VL's norms).
	RMSNorm(out, x View, w Weight, rows, cols int, eps float32)
	// MatMul: y[r,o] = sum_i x[r,i]*W[o,i] + bias[o]; W is PyTorch [out,in]; rows contiguous.
	MatMul(y, x View, w Weight, bias Weight, rows, in, out int)
	// MatMulEpilogue is MatMul followed by ep (epilogue.go): the GELU, then the residual add,
	// fused into the product where the backend can, else as its own GELU and Add
	// (ApplyEpilogue), with the same bits either way.
	MatMulEpilogue(y, x View, w Weight, bias Weight, rows, in, out int, ep Epilogue)
	// Rope2D rotates, in place, heads*headDim columns of each of seq rows (row stride
	// `stride`) by the halves convention: element i pairs with i+headDim/2; cos and sin are
	// [seq, headDim]. Called on q and k ONLY, never on v.
	Rope2D(x View, stride int, cos, sin View, seq, heads, headDim int)
	// Attention: o[s, h*hd:(h+1)*hd] = softmax(q_s.K^T*scale) V over the keys of s's segment
	// (Segment.Keys: its own rows, or a key range apart). q, k, v rows have stride `stride`;
	// o is [seq, heads*headDim] contiguous.
	Attention(o, q, k, v View, stride int, segs []Segment, heads, headDim int, scale float32)
	GELU(x View, n int, form GELUForm)
	Add(dst, src View, n int) // dst += src
	Mul(dst, src View, n int) // dst *= src (a gated MLP's gate times its up projection)
	// FillColumns sets columns [c0, c1) of rows rows of x (row stride `stride`) to 0, or with
	// mean to each column's mean over the rows (head ablation: engine/intervene/ablate.go).
	FillColumns(x View, rows, stride, c0, c1 int, mean bool)
	// Commit ends a pass and returns the time the backend spent on it. A GPU backend: the GPU
	// time of the pass's command buffers. The CPU backend, which runs each op as it is called:
	// the wall time since its previous Commit (or since it was made), host work between the
	// ops included. So a caller that times a pass commits first, with nothing pending, to
	// start the clock at the pass's first op (engine's Run.restartClock, conformance's
	// timing cases); engine/cpu's TestBuffersAndCommit pins this.
	Commit() (time.Duration, error)
	// Bind makes the ops that follow stop early once ctx is done (a cancel reaches the
	// middle of an attention over 65,536 patches within moments): their outputs are then
	// incomplete, and the caller, which checks ctx after the pass, discards it. A backend
	// whose work cannot stop part way (a GPU pass in flight) may ignore it.
	Bind(ctx context.Context)
	// Close waits for pending work and releases everything the backend holds: its buffers
	// (later Frees are no-ops) and what it wrapped of the weights' Regions. It is called
	// before those Regions are unmapped (Engine.Close keeps that order), and more than once
	// is harmless.
	Close() error
}

// Strided is the extent of rows rows of width cols at row stride stride: how many elements
// from a view's offset an op may touch. Backends check views against it.
func Strided(rows, stride, cols int) int {
	if rows <= 0 {
		return 0
	}
	return (rows-1)*stride + cols
}

// Overlaps says whether out's first nOut elements and in's first nIn share memory. Ops read
// inputs while writing outputs, so backends refuse such an alias rather than mix old and
// new values.
func Overlaps(out View, nOut int, in View, nIn int) bool {
	if out.Buf != in.Buf || nOut == 0 || nIn == 0 {
		return false
	}
	return out.Off < in.Off+nIn && in.Off < out.Off+nOut
}
