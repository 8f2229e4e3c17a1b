package engine

// weights.go: a block's weights by role as the graph reads them, and the block's matrix
// products listed for the benchmarks.
//
// Invariant: BlockWeights is indexed by engine/model's roles, the order every family lists its
// tensor names in, so w[wFC1W] is fc1 (a gated MLP's gate) whatever the family.
// Mutation that would silently break it: numbering a role here apart from model's, e.g.
// wFC1W = model.RoleUpW: Qwen2.5-VL would run its up projection as the gate (the same shape),
// a fluent wrong tower (TestParityQwen25VL catches it).

import (
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/model"
)

// Indices of a block's weights: engine/model's roles.
const (
	wNorm1W          = model.RoleNorm1W
	wNorm1B          = model.RoleNorm1B
	wQKVW            = model.RoleQKVW
	wQKVB            = model.RoleQKVB
	wProjW           = model.RoleProjW
	wProjB           = model.RoleProjB
	wNorm2W          = model.RoleNorm2W
	wNorm2B          = model.RoleNorm2B
	wFC1W            = model.RoleFC1W // a gated MLP's gate
	wFC1B            = model.RoleFC1B
	wFC2W            = model.RoleFC2W // a gated MLP's down projection
	wFC2B            = model.RoleFC2B
	wUpW             = model.RoleUpW // a gated MLP's up projection
	wUpB             = model.RoleUpB
	blockWeightCount = model.Roles
)

// BlockWeights are one block's weights by role; a role the family has not (the norms' biases
// of an RMS-norm family, the up projection of an ungated MLP) is the zero Weight.
type BlockWeights [blockWeightCount]backend.Weight

// GEMM is one of a block's four matrix products: y[S, Out] = x[S, In] W^T + B.
type GEMM struct {
	Name    string
	W, B    backend.Weight
	In, Out int
}

// GEMMs lists the block's matrix products in graph order (qkv, proj, fc1, fc2; a gated MLP's
// gate, up and down), for benchmarks that time them at the block's shapes with its own weights.
func (w *BlockWeights) GEMMs(c Config) []GEMM {
	D, I := c.Hidden, c.Intermediate
	if c.Gated() {
		return []GEMM{{"qkv", w[wQKVW], w[wQKVB], D, 3 * D}, {"proj", w[wProjW], w[wProjB], D, D},
			{"gate", w[wFC1W], w[wFC1B], D, I}, {"up", w[wUpW], w[wUpB], D, I}, {"down", w[wFC2W], w[wFC2B], I, D}}
	}
	return []GEMM{{"qkv", w[wQKVW], w[wQKVB], D, 3 * D}, {"proj", w[wProjW], w[wProjB], D, D},
		{"fc1", w[wFC1W], w[wFC1B], D, I}, {"fc2", w[wFC2W], w[wFC2B], I, D}}
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
