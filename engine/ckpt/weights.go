package ckpt

// weights.go: a block's and a merger's weights as the graph reads them, and the block's matrix
// products listed for the benchmarks.
//
// Invariant: BlockWeights is indexed by engine/model's roles, the order every family lists its
// tensor names in, so w[model.RoleFC1W] is fc1 (a gated MLP's gate) whatever the family (the
// engine's graph reads them by the short names of its face.go: wFC1W = model.RoleFC1W).
// Mutation that would silently break it: numbering a role apart from model's, e.g.
// wFC1W = model.RoleUpW: Qwen2.5-VL would run its up projection as the gate (the same shape),
// a fluent wrong tower (TestParityQwen25VL catches it).

import (
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/model"
)

// BlockWeights are one block's weights by role; a role the family has not (the norms' biases
// of an RMS-norm family, the up projection of an ungated MLP) is the zero Weight.
type BlockWeights [model.Roles]backend.Weight

// MergerWeights are one merger's six weights.
type MergerWeights struct{ NormW, NormB, FC1W, FC1B, FC2W, FC2B backend.Weight }

// GEMM is one of a block's four matrix products: y[S, Out] = x[S, In] W^T + B.
type GEMM struct {
	Name    string
	W, B    backend.Weight
	In, Out int
}

// GEMMs lists the block's matrix products in graph order (qkv, proj, fc1, fc2; a gated MLP's
// gate, up and down), for benchmarks that time them at the block's shapes with its own weights.
func (w *BlockWeights) GEMMs(c model.Config) []GEMM {
	D, I := c.Hidden, c.Intermediate
	if c.Gated() {
		return []GEMM{{"qkv", w[model.RoleQKVW], w[model.RoleQKVB], D, 3 * D}, {"proj", w[model.RoleProjW], w[model.RoleProjB], D, D},
			{"gate", w[model.RoleFC1W], w[model.RoleFC1B], D, I}, {"up", w[model.RoleUpW], w[model.RoleUpB], D, I}, {"down", w[model.RoleFC2W], w[model.RoleFC2B], I, D}}
	}
	return []GEMM{{"qkv", w[model.RoleQKVW], w[model.RoleQKVB], D, 3 * D}, {"proj", w[model.RoleProjW], w[model.RoleProjB], D, D},
		{"fc1", w[model.RoleFC1W], w[model.RoleFC1B], D, I}, {"fc2", w[model.RoleFC2W], w[model.RoleFC2B], I, D}}
}

// WidenedF32 is w widened exactly to float32 in host memory of its own (a region no
// residency holds, page-aligned as a region is, freed by the garbage collector: for a backend
// that reads it during the call only, the CPU's): the benchmarks time a product with a
// checkpoint's bf16 or f16 weight against the same product with float32 weights. w itself
// when it is float32.
func WidenedF32(w backend.Weight) backend.Weight {
	if w.DType == dtype.F32 {
		return w
	}
	vals := make([]float32, w.Elems())
	dtype.DecodeF32(vals, w.Bytes(), w.DType)
	mem := make([]byte, 4*len(vals)+int(pageSize()))
	base := int64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	off := alignUp(base, pageSize()) - base
	b := dtype.EncodeF32(mem[off:off], vals, dtype.F32)
	return backend.Weight{Name: w.Name, DType: dtype.F32, Shape: w.Shape, Region: newRegion(b, false)}
}

// DecodeInto widens a weight into dst (host-side use: the position table, the non-finite
// checks).
func DecodeInto(dst []float32, w backend.Weight) { dtype.DecodeF32(dst, w.Bytes(), w.DType) }
