// elementwise.go: GELU (tanh, erf or quick) and Add.
//
// Invariant: GELU computes the named formula in float64 with math.Tanh / math.Erf / math.Exp
// and rounds once to float32 (so each output is within 1 ulp of the exact value); GELUTanh is
// Qwen3-VL's block MLP's "gelu_pytorch_tanh", GELUErf the mergers' nn.GELU(), GELUQuick
// Qwen2-VL's block MLP's "quick_gelu". Where the packed kernels run on
// AVX-512 (kernel.UseFMA && kernel.UseAVX512, fixed at start-up), GELUTanh is kernel.GELUTanh
// instead: float32 x*sigmoid(2u), 16 lanes at a time, within a few ulp (kernel's TestGELUTanh)
// and the same bits whatever the chunking (every lane runs the same instructions).
// Mutation that would silently break it: swapping the two forms (or mapping an unknown form to
// one of them): the curves differ by at most ~1e-3, so the model stays fluent but wrong.
package cpu

import (
	"fmt"
	"math"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

const elemChunk = 1 << 14 // elements per task of the elementwise ops

// GELU applies the GELU named by form to x[0:n], in place.
func (b *Backend) GELU(x backend.View, n int, form backend.GELUForm) {
	b.mu.Lock()
	defer b.mu.Unlock()
	xs := span(x, n, "GELU x")
	g := geluRows(form)
	b.parallel(chunks(n, elemChunk), func(_, t int) {
		g(xs[t*elemChunk : min(n, (t+1)*elemChunk)])
	})
}

// geluRows is the GELU named by form over a slice, in place: the one element-wise GELU of
// the GELU op and MatMul's epilogue (so both give the same bits).
func geluRows(form backend.GELUForm) func([]float32) {
	var f func(float64) float64
	switch form {
	case backend.GELUTanh:
		if kernel.UseFMA && kernel.UseAVX512 {
			return func(x []float32) {
				if len(x) > 0 {
					kernel.GELUTanh(&x[0], len(x))
				}
			}
		}
		f = geluTanh // TANH here: the block MLP
	case backend.GELUErf:
		f = geluErf // ERF here: the mergers
	case backend.GELUQuick:
		f = geluQuick // QUICK here: Qwen2-VL's block MLP
	case backend.GELUSiLU:
		f = silu // SILU here: Qwen2.5-VL's gate
	default:
		panic(fmt.Sprintf("cpu: GELU: unknown form %d", form))
	}
	return func(x []float32) {
		for i, v := range x {
			x[i] = float32(f(float64(v)))
		}
	}
}

// geluTanh is TANH: 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))).
func geluTanh(x float64) float64 {
	const k = 0.7978845608028654 // sqrt(2/pi)
	return 0.5 * x * (1 + math.Tanh(k*(x+0.044715*x*x*x)))
}

// geluQuick is QUICK: x*sigmoid(1.702x) = x/(1+exp(-1.702x)).
func geluQuick(x float64) float64 {
	return x / (1 + math.Exp(-1.702*x))
}

// silu is SILU: x*sigmoid(x) = x/(1+exp(-x)).
func silu(x float64) float64 {
	return x / (1 + math.Exp(-x))
}

// geluErf is ERF: 0.5x(1+erf(x/sqrt(2))).
func geluErf(x float64) float64 {
	return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
}

// Add computes dst[0:n] += src[0:n]. dst may be src itself; partial overlap panics.
func (b *Backend) Add(dst, src backend.View, n int) {
	b.binary("Add", dst, src, n, func(d, s []float32) { addRows(d, 0, s, 0, 1, len(d)) })
}

// addRows adds dst[r*ld+j] += src[r*lds+j] for r < rows, j < n (lds 0: one row, a bias, to
// every row): through kernel.AddRows where the AVX-512 kernels run, else this loop; the same
// float32 additions either way, so the same bits.
func addRows(dst []float32, ld int, src []float32, lds, rows, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	if kernel.UseAVX512 {
		_ = dst[(rows-1)*ld+n-1] // bounds, as the loop would check them
		_ = src[(rows-1)*lds+n-1]
		kernel.AddRows(&dst[0], ld, &src[0], lds, rows, n)
		return
	}
	for r := range rows {
		d, s := dst[r*ld:][:n], src[r*lds:][:n]
		for j, v := range s {
			d[j] += v
		}
	}
}

// Mul computes dst[0:n] *= src[0:n] (a gated MLP's gate times its up projection). dst may be
// src itself; partial overlap panics.
func (b *Backend) Mul(dst, src backend.View, n int) {
	b.binary("Mul", dst, src, n, func(d, s []float32) {
		for i := range d {
			d[i] *= s[i]
		}
	})
}

// binary runs op over dst[0:n] and src[0:n] in chunks on every core (op sees equal-length
// chunks of the two); dst may be src itself, a partial overlap panics.
func (b *Backend) binary(name string, dst, src backend.View, n int, op func(d, s []float32)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ds := span(dst, n, name+" dst")
	ss := span(src, n, name+" src")
	if dst.Buf != src.Buf || dst.Off != src.Off {
		noOverlap(name, dst, n, src, n)
	}
	b.parallel(chunks(n, elemChunk), func(_, t int) {
		lo, hi := t*elemChunk, min(n, (t+1)*elemChunk)
		op(ds[lo:hi], ss[lo:hi])
	})
}

// FillColumns sets columns [c0, c1) of rows rows of x (row stride stride) to 0, or with mean to
// each column's mean over the rows: a float64 sum in row order, rounded once (head ablation).
func (b *Backend) FillColumns(x backend.View, rows, stride, c0, c1 int, mean bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rows < 0 || c0 < 0 || c1 < c0 || c1 > stride {
		panic(fmt.Sprintf("cpu: FillColumns: bad shape rows %d stride %d columns %d..%d", rows, stride, c0, c1))
	}
	if rows == 0 || c1 == c0 {
		return
	}
	xs := span(x, (rows-1)*stride+c1, "FillColumns x")
	fill := make([]float32, c1-c0) // 0, or the means
	if mean {
		for j := range fill {
			var s float64
			for r := range rows {
				s += float64(xs[r*stride+c0+j])
			}
			fill[j] = float32(s / float64(rows))
		}
	}
	for r := range rows {
		copy(xs[r*stride+c0:r*stride+c1], fill)
	}
}
