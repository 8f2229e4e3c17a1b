// norm.go: LayerNorm over the last axis, biased variance, eps inside the square root.
//
// Invariant: mean and variance are two-pass float64 sums over the row in index order
// (documented choice: float64 costs nothing extra in scalar code and keeps 1e-6-level parity
// at cols 4608 even for rows with a large mean); the affine part is float32, the product
// rounded before the bias is added. Every product that feeds an add is written float64(d*d)
// or float32(x*w): the Go spec lets a compiler fuse a*b+c unless a conversion rounds the
// product, and Go on arm64 does; with the conversions a row's bits are the same on amd64 and
// arm64.
// Mutation that would silently break it: dividing the sum of squares by cols-1 (unbiased
// variance, as torch.var does by default), off by only 1/cols.
// Where the packed kernels run on AVX-512 (fixed at start-up) the row's first len/16*16
// elements go through kernel.SumF64 / SumSqDevF64 / NormAffine: the same float64 sums in
// another fixed order (two 8-lane accumulators, then the tail in index order), the same
// element-wise affine part; deterministic, within 1e-6 of the scalar row (TestOpParity).
package cpu

import (
	"fmt"
	"math"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// LayerNorm writes out[r,:] = (x[r,:]-mean)/sqrt(var+eps)*w + b. out may be x itself.
func (b *Backend) LayerNorm(out, x backend.View, w, bias backend.Weight, rows, cols int, eps float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rows < 0 || cols <= 0 {
		panic(fmt.Sprintf("cpu: LayerNorm: bad shape rows %d cols %d", rows, cols))
	}
	checkWeight("LayerNorm w", w, cols)
	checkWeight("LayerNorm b", bias, cols)
	xs := span(x, rows*cols, "LayerNorm x")
	os := span(out, rows*cols, "LayerNorm out")
	if out.Buf != x.Buf || out.Off != x.Off {
		noOverlap("LayerNorm", out, rows*cols, x, rows*cols)
	}
	wb := b.sharedScratch(2 * cols)
	decodeWeight(wb[:cols], w, 0)
	decodeWeight(wb[cols:], bias, 0)
	per := max(1, 8192/cols) // rows per task
	row := layerNormRow
	if kernel.UseFMA && kernel.UseAVX512 { // fixed at start-up
		row = layerNormRowAVX512
	}
	b.parallel(chunks(rows, per), func(_, t int) {
		for r := t * per; r < min(rows, (t+1)*per); r++ {
			row(os[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], wb[:cols], wb[cols:], float64(eps))
		}
	})
}

// layerNormRow normalizes one row; out may alias x (x is fully read before out is written).
func layerNormRow(out, x, w, b []float32, eps float64) { layerNormRowVec(out, x, w, b, eps, 0) }

// layerNormRowAVX512 is layerNormRow with the row's whole 16-float chunks through the vector
// passes of norm_amd64.s, the tail through the same scalar code.
func layerNormRowAVX512(out, x, w, b []float32, eps float64) {
	layerNormRowVec(out, x, w, b, eps, len(x)&^15)
}

// layerNormRowVec normalizes one row, its first n16 elements (a multiple of 16; 0 on the
// scalar path) through kernel.SumF64 / SumSqDevF64 / NormAffine and the rest in index order.
func layerNormRowVec(out, x, w, b []float32, eps float64, n16 int) {
	n := float64(len(x))
	w, b, out = w[:len(x)], b[:len(x)], out[:len(x)]
	sum := 0.0
	if n16 > 0 {
		sum = kernel.SumF64(&x[0], n16)
	}
	for _, v := range x[n16:] {
		sum += float64(v)
	}
	mean := sum / n
	ss := 0.0
	if n16 > 0 {
		ss = kernel.SumSqDevF64(&x[0], n16, mean)
	}
	for _, v := range x[n16:] {
		d := float64(v) - mean
		ss += float64(d * d)
	}
	inv := 1 / math.Sqrt(ss/n+eps) // BIASED variance: divide by n
	if n16 > 0 {
		kernel.NormAffine(&out[0], &x[0], &w[0], &b[0], n16, mean, inv)
	}
	for i := n16; i < len(x); i++ {
		xn := float32((float64(x[i]) - mean) * inv)
		out[i] = float32(xn*w[i]) + b[i]
	}
}

// RMSNorm writes out[r,:] = x[r,:]/sqrt(mean(x[r,:]^2)+eps)*w (Qwen2.5-VL's norms: no mean
// taken off, no bias). The mean of squares is a float64 sum in index order; the scaled value
// is rounded to float32 before the gain multiplies it, as transformers' Qwen2_5_VLRMSNorm
// rounds x*rsqrt(...) before weight*. out may be x itself.
// Mutation that would silently break it: taking the mean off first (LayerNorm without the
// bias): with rows of small mean the outputs move by little, a fluent wrong tower.
func (b *Backend) RMSNorm(out, x backend.View, w backend.Weight, rows, cols int, eps float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rows < 0 || cols <= 0 {
		panic(fmt.Sprintf("cpu: RMSNorm: bad shape rows %d cols %d", rows, cols))
	}
	checkWeight("RMSNorm w", w, cols)
	xs := span(x, rows*cols, "RMSNorm x")
	os := span(out, rows*cols, "RMSNorm out")
	if out.Buf != x.Buf || out.Off != x.Off {
		noOverlap("RMSNorm", out, rows*cols, x, rows*cols)
	}
	wb := b.sharedScratch(cols)
	decodeWeight(wb, w, 0)
	per := max(1, 8192/cols) // rows per task
	b.parallel(chunks(rows, per), func(_, t int) {
		for r := t * per; r < min(rows, (t+1)*per); r++ {
			rmsNormRow(os[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], wb, float64(eps))
		}
	})
}

// rmsNormRow normalizes one row; out may alias x (x is fully read before out is written).
func rmsNormRow(out, x, w []float32, eps float64) {
	ss := 0.0
	for _, v := range x {
		ss += float64(float64(v) * float64(v)) // the conversion keeps arm64 from fusing: amd64's bits
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
	w, out = w[:len(x)], out[:len(x)]
	for i, v := range x {
		xn := float32(float64(v) * inv)
		out[i] = float32(xn * w[i])
	}
}
