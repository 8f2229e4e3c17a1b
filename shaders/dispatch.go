package shaders

// dispatch.go: the calling convention of every kernel — kernel name, buffer bindings, the
// packed parameter struct and the grid — shared by the Metal backend and the C++ harness.
//
// Invariant: each params packing lists the fields in the order of the kernel's struct, all
// 4-byte scalars (so Go and MSL agree on the layout without padding), and every grid covers
// its whole op (ceil-divided; the kernels check bounds). Mutation that would silently break
// it: swapping two uint fields of the same struct (say rows and cols of LayerNorm) — still
// the right size, so nothing but the numbers notices; the harness compares the numbers.

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// DType is a weight dtype code as the prelude's DTYPE_* constants.
type DType uint32

const (
	F32  DType = 0
	BF16 DType = 1
	F16  DType = 2
)

// DTypeOf maps a safetensors dtype to its kernel code.
func DTypeOf(d dtype.DType) (DType, error) {
	switch d {
	case dtype.F32:
		return F32, nil
	case dtype.BF16:
		return BF16, nil
	case dtype.F16:
		return F16, nil
	}
	return 0, fmt.Errorf("shaders: no kernel reads weights of dtype %q", d)
}

func (d DType) String() string {
	switch d {
	case BF16:
		return "bf16"
	case F16:
		return "f16"
	}
	return "f32"
}

// Size is the bytes of one element, and so the alignment a binding of it needs.
func (d DType) Size() int {
	if d == F32 {
		return 4
	}
	return 2
}

// Operand is a buffer argument: a backend's buffer handle and a byte offset into it.
type Operand struct {
	Handle any
	Offset int
}

// Binding is an operand bound at argument index i of Dispatch.Buffers, with the alignment
// its offset must have (the size of the element the kernel reads through it).
type Binding struct {
	Operand
	Align int
}

// Dispatch is one kernel launch: buffers at indices 0..n-1, Params (setBytes) at index n,
// Groups threadgroups of Threads threads.
type Dispatch struct {
	Kernel  string
	Buffers []Binding
	Params  []byte
	Groups  [3]int
	Threads [3]int
	Cost    Cost // what it asks of a GPU (cost.go)
}

// Empty says whether the dispatch has no threads (a zero-sized op): skip it.
func (d Dispatch) Empty() bool { return d.Groups[0]*d.Groups[1]*d.Groups[2] == 0 }

// Threadgroup sizes; the kernels are written for exactly these.
const (
	layerNormThreads   = 32 // one simdgroup per row
	matmulTile         = 64 // 64x64 outputs per threadgroup of 4 simdgroups
	matmulThreads      = 128
	matmulK            = 32  // k step (MM_K)
	matmulScalarTile   = 64  // matmul_scalar_*: 64x64 outputs per threadgroup (MMS_TILE)
	matmulScalarK      = 16  // its k step (MMS_K)
	matmulScalarThread = 256 // 16 x 16 threads, 4 x 4 outputs each (MMS_THREADS)
	elementwiseThreads = 256 // also rope2d
	attentionQueries   = 4   // one simdgroup per query
	attentionMaxDim    = 128 // 32 lanes x 4 output dims
	flashQueries       = 32  // attention_hdN: 4 simdgroups of 8 query rows
	flashThreads       = 128
)

// ThreadgroupSize is the number of threads per threadgroup a kernel is dispatched with
// (a GPU pipeline must allow at least this many).
func ThreadgroupSize(kernel string) int {
	switch kernel {
	case "layer_norm", "rms_norm":
		return layerNormThreads
	case "attention":
		return 32 * attentionQueries
	}
	if strings.HasPrefix(kernel, "matmul_scalar_") {
		return matmulScalarThread
	}
	if strings.HasPrefix(kernel, "matmul_") {
		return matmulThreads
	}
	if strings.HasPrefix(kernel, "attention_hd") {
		return flashThreads
	}
	return elementwiseThreads
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// u32 checks that a size fits the kernels' uint arithmetic.
func u32(n int) uint32 {
	if n < 0 || n > math.MaxUint32 {
		panic(fmt.Sprintf("shaders: %d does not fit a kernel's uint", n))
	}
	return uint32(n)
}

// pack lays out a params struct: uint32 and float32 fields, little endian, in order.
func pack(fields ...any) []byte {
	out := make([]byte, 0, 4*len(fields))
	for _, f := range fields {
		switch v := f.(type) {
		case uint32:
			out = binary.LittleEndian.AppendUint32(out, v)
		case float32:
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		default:
			panic(fmt.Sprintf("shaders: params field of type %T", f))
		}
	}
	return out
}

// bind checks an operand's alignment and returns its binding.
func bind(kernel string, o Operand, align int) Binding {
	if o.Handle == nil {
		panic(fmt.Sprintf("shaders: %s: operand without a buffer", kernel))
	}
	if o.Offset < 0 || o.Offset%align != 0 {
		panic(fmt.Sprintf("shaders: %s: offset %d is not a multiple of %d", kernel, o.Offset, align))
	}
	return Binding{o, align}
}

func floats(kernel string, ops ...Operand) []Binding {
	bs := make([]Binding, len(ops))
	for i, o := range ops {
		bs[i] = bind(kernel, o, 4)
	}
	return bs
}

// LayerNorm: out[r,:] = (x[r,:]-mean)/sqrt(var+eps)*w + b, biased variance; w and b are
// weights of dtypes wt and bt.
func LayerNorm(out, x, w, b Operand, wt, bt DType, rows, cols int, eps float32) Dispatch {
	const k = "layer_norm"
	return Dispatch{
		Kernel:  k,
		Buffers: append(floats(k, out, x), bind(k, w, wt.Size()), bind(k, b, bt.Size())),
		Params:  pack(u32(rows), u32(cols), eps, uint32(wt), uint32(bt)),
		Groups:  [3]int{rows, 1, 1},
		Threads: [3]int{layerNormThreads, 1, 1},
		Cost:    layerNormCost(rows, cols, wt, bt),
	}
}

// RMSNorm: out[r,:] = x[r,:]/sqrt(mean(x^2)+eps)*w; w is a weight of dtype wt.
func RMSNorm(out, x, w Operand, wt DType, rows, cols int, eps float32) Dispatch {
	const k = "rms_norm"
	c := layerNormCost(rows, cols, wt, wt)
	c.Op = fmt.Sprintf("rms_norm %dx%d", rows, cols)
	return Dispatch{
		Kernel:  k,
		Buffers: append(floats(k, out, x), bind(k, w, wt.Size())),
		Params:  pack(u32(rows), u32(cols), eps, uint32(wt), uint32(wt)),
		Groups:  [3]int{rows, 1, 1},
		Threads: [3]int{layerNormThreads, 1, 1},
		Cost:    c,
	}
}

// matMulKernel names the matmul kernel for a weight dtype and row tile (64, or 32: `_m32`).
func matMulKernel(wt DType, rowTile int) string {
	k := "matmul_" + wt.String()
	if rowTile == 32 {
		k += "_m32"
	}
	return k
}

// matmulSmallGrid: a matmul that would run fewer 64x64 threadgroups than this takes the 32-row
// kernels instead, twice the threadgroups (with less threadgroup memory each, more fit a core):
// 240 is two waves of the largest GPU the model knows (40 cores x 3 threadgroups of 64 rows).
// At the default MLP tile of 512 rows, fc2 (out 1152) runs 144 threadgroups of 64 rows: its
// last wave on a 40-core GPU would be a fifth full.
const matmulSmallGrid = 240

// MatMulRowTile is the row tile MatMul picks for a shape.
func MatMulRowTile(rows, out int) int {
	if ceilDiv(rows, matmulTile)*ceilDiv(out, matmulTile) < matmulSmallGrid {
		return 32
	}
	return matmulTile
}

// Epilogue is what the matmul kernel does after y = x W^T + bias (backend.Epilogue's
// contract): the GELU of Form on y when GELU is set, then Residual[r,o] += y[r,o] when
// Residual has a buffer.
type Epilogue struct {
	GELU     bool
	Form     backend.GELUForm
	Residual Operand
}

// geluCode is the kernel's MM_GELU_* code.
func (e Epilogue) geluCode() uint32 {
	if !e.GELU {
		return 0
	}
	switch e.Form {
	case backend.GELUTanh:
		return 1
	case backend.GELUErf:
		return 2
	case backend.GELUQuick:
		return 3
	case backend.GELUSiLU:
		return 4
	}
	panic(fmt.Sprintf("shaders: unknown GELU form %d", e.Form))
}

// MatMulKernel names the simdgroup-matrix kernel MatMul runs for a weight dtype and shape.
func MatMulKernel(wt DType, rows, out int) string { return matMulKernel(wt, MatMulRowTile(rows, out)) }

// MatMulScalarKernel names the scalar matmul kernel of a weight dtype (the simdgroup kernels'
// fallback: FallbackKernel).
func MatMulScalarKernel(wt DType) string { return "matmul_scalar_" + wt.String() }

// MatMul: y[r,o] = sum_i x[r,i]*W[o,i] + bias[o], then the epilogue. Without a bias
// (bias.Handle nil) or a residual, y is bound in its place and never read.
func MatMul(y, x, w, bias Operand, wt, bt DType, rows, in, out int, ep Epilogue) Dispatch {
	return MatMulTiled(MatMulRowTile(rows, out), y, x, w, bias, wt, bt, rows, in, out, ep)
}

// MatMulOn is MatMul on a kernel of the caller's choice: MatMulKernel(wt, rows, out), or the
// dtype's scalar kernel (MatMulScalarKernel) where a GPU has no pipeline for that one. Both
// take the same buffers and params.
func MatMulOn(kn string, y, x, w, bias Operand, wt, bt DType, rows, in, out int, ep Epilogue) Dispatch {
	switch kn {
	case MatMulKernel(wt, rows, out):
		return MatMul(y, x, w, bias, wt, bt, rows, in, out, ep)
	case MatMulScalarKernel(wt):
		d := matMulDispatch(kn, y, x, w, bias, wt, bt, rows, in, out, ep)
		d.Groups = [3]int{ceilDiv(out, matmulScalarTile), ceilDiv(rows, matmulScalarTile), 1}
		d.Threads = [3]int{matmulScalarThread, 1, 1}
		d.Cost = matmulScalarCost(rows, in, out, wt, bt, bias.Handle != nil, ep)
		return d
	}
	panic(fmt.Sprintf("shaders: matmul: kernel %s does not run %s weights at %d rows x %d outputs", kn, wt, rows, out))
}

// MatMulTiled is MatMul with its row tile (64 or 32) chosen by the caller (the tests run both).
func MatMulTiled(rowTile int, y, x, w, bias Operand, wt, bt DType, rows, in, out int, ep Epilogue) Dispatch {
	if rowTile != 64 && rowTile != 32 {
		panic(fmt.Sprintf("shaders: matmul row tile %d: the kernels have 64 and 32", rowTile))
	}
	d := matMulDispatch(matMulKernel(wt, rowTile), y, x, w, bias, wt, bt, rows, in, out, ep)
	d.Groups = [3]int{ceilDiv(out, matmulTile), ceilDiv(rows, rowTile), 1}
	d.Threads = [3]int{matmulThreads, 1, 1}
	d.Cost = matmulCost(rowTile, rows, in, out, wt, bt, bias.Handle != nil, ep)
	return d
}

// matMulDispatch is the buffers and params every matmul kernel takes (the grid and cost are
// the kernel's).
func matMulDispatch(k string, y, x, w, bias Operand, wt, bt DType, rows, in, out int, ep Epilogue) Dispatch {
	hasBias := uint32(1)
	if bias.Handle == nil {
		bias, bt, hasBias = y, F32, 0
	}
	res, hasRes := ep.Residual, uint32(1)
	if res.Handle == nil {
		res, hasRes = y, 0
	}
	return Dispatch{
		Kernel:  k,
		Buffers: append(floats(k, y, x), bind(k, w, wt.Size()), bind(k, bias, bt.Size()), bind(k, res, 4)),
		Params:  pack(u32(rows), u32(in), u32(out), hasBias, uint32(bt), ep.geluCode(), hasRes),
	}
}

// Rope2D rotates, in place, heads*headDim columns of seq rows of x (row stride stride) by
// the halves convention; cos and sin are [seq, headDim]. For q and k ONLY, never v.
func Rope2D(x, cos, sin Operand, stride, seq, heads, headDim int) Dispatch {
	const k = "rope2d"
	if headDim%2 != 0 {
		panic(fmt.Sprintf("shaders: rope2d: head dim %d is odd", headDim))
	}
	n := seq * heads * headDim / 2
	return Dispatch{
		Kernel:  k,
		Buffers: floats(k, x, cos, sin),
		Params:  pack(u32(seq), u32(heads), u32(headDim), u32(stride)),
		Groups:  [3]int{ceilDiv(n, elementwiseThreads), 1, 1},
		Threads: [3]int{elementwiseThreads, 1, 1},
		Cost:    ropeCost(seq, heads, headDim),
	}
}

// CheckHeadDim reports a head dim the attention kernels cannot take.
func CheckHeadDim(headDim int) error {
	if headDim < 1 || headDim > attentionMaxDim {
		return fmt.Errorf("shaders: attention takes head dims 1..%d, not %d", attentionMaxDim, headDim)
	}
	return nil
}

// FlashHeadDims are the head dims with a flash kernel (attention_hdN: simdgroup matrices, K/V
// tiles in threadgroup memory, N a compile-time constant); any other head dim up to 128 runs
// the one-simdgroup-per-query kernel `attention`.
var FlashHeadDims = []int{16, 32, 64, 72, 80, 96, 128}

// AttentionKernel names the kernel for a head dim.
func AttentionKernel(headDim int) string {
	for _, hd := range FlashHeadDims {
		if hd == headDim {
			return fmt.Sprintf("attention_hd%d", hd)
		}
	}
	return "attention"
}

// AttentionQueryTile is the queries one threadgroup of a kernel runs: a split of a segment's
// queries at a multiple of it leaves no partial tile but the last.
func AttentionQueryTile(kernel string) int {
	if kernel == "attention" {
		return attentionQueries
	}
	return flashQueries
}

// flashKeyTile is the keys per tile of a flash kernel (as attention.metal instantiates it).
func flashKeyTile(headDim int) int {
	if headDim <= 96 {
		return 32
	}
	return 16
}

// Attention runs the queries qs of one segment against its key rows keys (the segment's own
// rows, or a key range apart: backend.Segment.Keys):
// o[s, h*hd:(h+1)*hd] = softmax(q_s.K^T*scale) V over the keys. q, k, v rows have stride
// stride; o is [.., heads*headDim]; seq bounds the key rows (the NO_SEGMENT_BOUND mutant reads
// keys [0, seq)). It runs the head dim's flash kernel where there is one (AttentionKernel).
func Attention(o, q, k, v Operand, stride int, keys, qs backend.Segment, seq, heads, headDim int, scale float32) Dispatch {
	return AttentionOn(AttentionKernel(headDim), o, q, k, v, stride, keys, qs, seq, heads, headDim, scale)
}

// AttentionOn is Attention on a kernel of the caller's choice: AttentionKernel(headDim), or
// `attention` (any head dim) where a GPU has no pipeline for the flash kernel.
func AttentionOn(kn string, o, q, k, v Operand, stride int, seg, qs backend.Segment, seq, heads, headDim int, scale float32) Dispatch {
	if kn != "attention" && kn != AttentionKernel(headDim) {
		panic(fmt.Sprintf("shaders: attention: kernel %s does not take head dim %d", kn, headDim))
	}
	if err := CheckHeadDim(headDim); err != nil {
		panic(err)
	}
	if qs.End < qs.Start || qs.Start < 0 || seg.End <= seg.Start || seg.Start < 0 || seg.End > seq {
		panic(fmt.Sprintf("shaders: attention: queries %+v, keys %+v (of %d rows)", qs, seg, seq))
	}
	cost := flashCost(qs.End-qs.Start, seg.End-seg.Start, heads, headDim)
	if kn == "attention" {
		cost = scalarAttentionCost(qs.End-qs.Start, seg.End-seg.Start, heads, headDim)
	}
	return Dispatch{
		Kernel:  kn,
		Buffers: floats(kn, o, q, k, v),
		Params: pack(u32(seg.Start), u32(seg.End), u32(qs.Start), u32(qs.End), u32(seq), u32(heads), u32(headDim),
			u32(stride), scale),
		Groups:  [3]int{ceilDiv(qs.End-qs.Start, AttentionQueryTile(kn)), heads, 1},
		Threads: [3]int{ThreadgroupSize(kn), 1, 1},
		Cost:    cost,
	}
}

// GELUKernel names the kernel of a GELU form: TANH in Qwen3-VL's block MLP, ERF in the
// mergers, QUICK in Qwen2-VL's block MLP.
func GELUKernel(form backend.GELUForm) string {
	switch form {
	case backend.GELUTanh:
		return "gelu_tanh"
	case backend.GELUErf:
		return "gelu_erf"
	case backend.GELUQuick:
		return "gelu_quick"
	case backend.GELUSiLU:
		return "gelu_silu"
	}
	panic(fmt.Sprintf("shaders: unknown GELU form %d", form))
}

// GELU applies the named GELU to x[0:n] in place.
func GELU(x Operand, n int, form backend.GELUForm) Dispatch {
	k := GELUKernel(form)
	return elementwise(k, floats(k, x), n)
}

// FillColumns: columns [c0, c1) of rows rows of x (row stride stride) set to 0, or with mean
// to each column's mean over the rows; one thread per column.
func FillColumns(x Operand, rows, stride, c0, c1 int, mean bool) Dispatch {
	const k = "fill_columns"
	n := c1 - c0
	m := uint32(0)
	if mean {
		m = 1
	}
	return Dispatch{
		Kernel:  k,
		Buffers: floats(k, x),
		Params:  pack(u32(rows), u32(stride), u32(c0), u32(c1), m),
		Groups:  [3]int{ceilDiv(n, elementwiseThreads), 1, 1},
		Threads: [3]int{elementwiseThreads, 1, 1},
		Cost:    fillColumnsCost(rows, n, mean),
	}
}

// Mul: dst[0:n] *= src[0:n].
func Mul(dst, src Operand, n int) Dispatch {
	const k = "mul_into"
	return elementwise(k, floats(k, dst, src), n)
}

// Add: dst[0:n] += src[0:n].
func Add(dst, src Operand, n int) Dispatch {
	const k = "add_into"
	return elementwise(k, floats(k, dst, src), n)
}

func elementwise(k string, bufs []Binding, n int) Dispatch {
	return Dispatch{
		Kernel:  k,
		Buffers: bufs,
		Params:  pack(u32(n)),
		Groups:  [3]int{ceilDiv(n, elementwiseThreads), 1, 1},
		Threads: [3]int{elementwiseThreads, 1, 1},
		Cost:    elementwiseCost(k, n),
	}
}
