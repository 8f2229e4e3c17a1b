package metal

// ops.go: the engine's primitives as dispatches (shaders/dispatch.go holds the kernels'
// calling convention; this file checks the views and binds the operands).
//
// Invariant: each op encodes exactly the kernel its engine contract names — TANH in the
// block MLP, ERF in the mergers, chosen by the form the graph passes; rope on the views the
// graph passes (q and k, never v); one attention dispatch per segment, so no query sees a
// key of another segment. Mutation that would silently break it: dispatching one attention
// over [0, seq) for all segments — a page of one image passes, a video or a multi-image
// page attends across frames.

import (
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// LayerNorm: out[r,:] = (x[r,:]-mean)/sqrt(var+eps)*w + b over cols, biased variance.
func (b *Backend) LayerNorm(out, x backend.View, w, bias backend.Weight, rows, cols int, eps float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := rows * cols
	if out.Buf != x.Buf || out.Off != x.Off { // in place is fine: each element is read before it is written
		noOverlap("LayerNorm", out, n, x, n)
	}
	oo, xo := operand(out, n, "LayerNorm out"), operand(x, n, "LayerNorm x")
	wo, wt, ok1 := b.weights.operand("LayerNorm", w, cols)
	bo, bt, ok2 := b.weights.operand("LayerNorm", bias, cols)
	if ok1 && ok2 {
		b.encode(shaders.LayerNorm(oo, xo, wo, bo, wt, bt, rows, cols, eps))
	}
}

// RMSNorm: out[r,:] = x[r,:]/sqrt(mean(x^2)+eps)*w over cols.
func (b *Backend) RMSNorm(out, x backend.View, w backend.Weight, rows, cols int, eps float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := rows * cols
	if out.Buf != x.Buf || out.Off != x.Off { // in place is fine: each element is read before it is written
		noOverlap("RMSNorm", out, n, x, n)
	}
	oo, xo := operand(out, n, "RMSNorm out"), operand(x, n, "RMSNorm x")
	if wo, wt, ok := b.weights.operand("RMSNorm", w, cols); ok {
		b.encode(shaders.RMSNorm(oo, xo, wo, wt, rows, cols, eps))
	}
}

// MatMul: y[r,o] = sum_i x[r,i]*W[o,i] + bias[o]; the zero Weight means no bias.
func (b *Backend) MatMul(y, x backend.View, w backend.Weight, bias backend.Weight, rows, in, out int) {
	b.MatMulEpilogue(y, x, w, bias, rows, in, out, backend.Epilogue{})
}

// MatMulEpilogue is MatMul with the epilogue (GELU on y, then y added into the residual)
// fused into the matmul kernel: one dispatch, the same element functions as the GELU and
// Add kernels.
func (b *Backend) MatMulEpilogue(y, x backend.View, w backend.Weight, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	b.mu.Lock()
	defer b.mu.Unlock()
	noOverlap("MatMul", y, rows*out, x, rows*in)
	yo, xo := operand(y, rows*out, "MatMul y"), operand(x, rows*in, "MatMul x")
	sep := shaders.Epilogue{GELU: ep.GELU, Form: ep.Form}
	if ep.Residual.Buf != nil {
		noOverlap("MatMulEpilogue", ep.Residual, rows*out, y, rows*out)
		noOverlap("MatMulEpilogue", ep.Residual, rows*out, x, rows*in)
		sep.Residual = operand(ep.Residual, rows*out, "MatMulEpilogue residual")
	}
	wo, wt, ok := b.weights.operand("MatMul", w, out*in)
	var bo shaders.Operand
	bt := shaders.F32
	if bias.Region != nil {
		var okb bool
		bo, bt, okb = b.weights.operand("MatMul bias", bias, out)
		ok = ok && okb
	}
	if !ok {
		return
	}
	// Row pieces short of the watchdog (one piece below ~65k rows for the towers we know), each
	// on its simdgroup-matrix kernel or, where this GPU has no pipeline for that, the scalar one.
	kernel := func(rows int) string {
		if kn := shaders.MatMulKernel(wt, rows, out); b.has(kn) {
			return kn
		}
		return shaders.MatMulScalarKernel(wt)
	}
	for _, p := range splitRows(kernel, rows, in, out, wt, b.opBudget) {
		pe := sep
		if pe.Residual.Handle != nil {
			pe.Residual.Offset += 4 * p.Start * out
		}
		yp, xp := yo, xo
		yp.Offset += 4 * p.Start * out
		xp.Offset += 4 * p.Start * in
		n := p.End - p.Start
		b.encode(shaders.MatMulOn(kernel(n), yp, xp, wo, bo, wt, bt, n, in, out, pe))
	}
}

// Rope2D rotates, in place, heads*headDim columns of seq rows (row stride stride), halves
// convention. The graph calls it on q and k ONLY, never on v.
func (b *Backend) Rope2D(x backend.View, stride int, cos, sin backend.View, seq, heads, headDim int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	xo := operand(x, backend.Strided(seq, stride, heads*headDim), "Rope2D x")
	co, so := operand(cos, seq*headDim, "Rope2D cos"), operand(sin, seq*headDim, "Rope2D sin")
	b.encode(shaders.Rope2D(xo, co, so, stride, seq, heads, headDim))
}

// Attention: o[s, h*hd:(h+1)*hd] = softmax(q_s.K^T*scale) V over the keys of s's segment
// (Segment.Keys: its own rows, or a key range apart): per segment, its queries in pieces short
// of the watchdog, each against the segment's keys (the kernels take the key range and the
// query range apart: seg_start/seg_end and q_begin/q_end).
func (b *Backend) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := shaders.CheckHeadDim(headDim); err != nil {
		panic(fmt.Sprintf("metal: Attention: %v", err))
	}
	seq, keyEnd := 0, 0
	for _, sg := range segs {
		keys := sg.Keys()
		if sg.Start < 0 || sg.End < sg.Start || keys.Start < 0 || keys.End < keys.Start || sg.Len() > 0 && keys.Len() == 0 {
			panic(fmt.Sprintf("metal: Attention: bad segment %+v", sg))
		}
		seq, keyEnd = max(seq, sg.End), max(keyEnd, keys.End)
	}
	D := heads * headDim
	nq, nk := backend.Strided(seq, stride, D), backend.Strided(keyEnd, stride, D)
	noOverlap("Attention", o, seq*D, q, nq)
	noOverlap("Attention", o, seq*D, k, nk)
	noOverlap("Attention", o, seq*D, v, nk)
	oo := operand(o, seq*D, "Attention o")
	qo, ko, vo := operand(q, nq, "Attention q"), operand(k, nk, "Attention k"), operand(v, nk, "Attention v")
	kn := shaders.AttentionKernel(headDim)
	if !b.has(kn) { // no pipeline for the flash kernel on this GPU
		kn = "attention"
	}
	for _, sg := range segs {
		for _, qs := range splitQueries(kn, sg, heads, headDim, b.opBudget) {
			b.encode(shaders.AttentionOn(kn, oo, qo, ko, vo, stride, sg.Keys(), qs, keyEnd, heads, headDim, scale))
		}
	}
}

// GELU applies the named form to x[0:n] in place: the graph passes TANH in the block MLP
// and ERF in the mergers; shaders.GELUKernel maps each to its own kernel.
func (b *Backend) GELU(x backend.View, n int, form backend.GELUForm) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.encode(shaders.GELU(operand(x, n, "GELU x"), n, form))
}

// Add computes dst[0:n] += src[0:n]. dst may be src itself; partial overlap panics.
func (b *Backend) Add(dst, src backend.View, n int) { b.binary("Add", dst, src, n, shaders.Add) }

// binary encodes the element-wise kernel of dispatch over dst[0:n] and src[0:n]; dst may be
// src itself, a partial overlap panics.
func (b *Backend) binary(name string, dst, src backend.View, n int, dispatch func(dst, src shaders.Operand, n int) shaders.Dispatch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if dst.Buf != src.Buf || dst.Off != src.Off {
		noOverlap(name, dst, n, src, n)
	}
	b.encode(dispatch(operand(dst, n, name+" dst"), operand(src, n, name+" src"), n))
}

// Mul: dst[0:n] *= src[0:n] (dst may be src itself).
func (b *Backend) Mul(dst, src backend.View, n int) { b.binary("Mul", dst, src, n, shaders.Mul) }

// FillColumns sets columns [c0, c1) of rows rows of x (row stride stride) to 0, or with mean
// to each column's mean over the rows.
func (b *Backend) FillColumns(x backend.View, rows, stride, c0, c1 int, mean bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rows == 0 || c1 <= c0 {
		return
	}
	xo := operand(x, (rows-1)*stride+c1, "FillColumns x")
	b.encode(shaders.FillColumns(xo, rows, stride, c0, c1, mean))
}
