// This file keeps one invariant: resizeBicubic is bit-identical to Pillow's
// Image.resize(size, BICUBIC) on 8-bit RGB (Resample.c): separable, the
// horizontal pass first into a uint8 intermediate, per-axis Keys a=-0.5
// weights normalised to sum 1, rounded to 22-bit fixed point away from zero,
// accumulated from 1<<21 and clamped after an arithmetic >>22; an axis whose
// size does not change is skipped.
// Mutation that would silently break it: dividing by the filter scale
// instead of multiplying by its reciprocal ss, or dropping the +0.5 in
// (x+xmin-center+0.5), moves many outputs by one level while still
// looking like a good bicubic resize.
//
// Every float64 product that is followed by an add or subtract is written
// float64(a*b): Pillow's C (x86-64, where the fixtures and pilref.py come
// from) rounds every product, and the Go spec lets a compiler fuse a*b+c into
// one rounding unless an explicit conversion forbids it. Go on arm64 (Apple
// silicon) does fuse: without the conversions it computes center exactly
// inside center-support+0.5 and the filter argument, and contracts the filter
// polynomials. Mutation that would silently break it: dropping the
// conversion in center; amd64's default GOAMD64=v1 build never fuses, so only
// an arm64 run (make test-arm64) sees TestCoeffsMatchPilref fail, with the
// first tap of some outputs moved by one.
package imageproc

import (
	"fmt"
	"math"

	"github.com/turbospark/inspector/internal/par"
)

const (
	precisionBits = 22
	bicubicA      = -0.5
	bicubicSup    = 2.0
)

// bicubicFilter is Pillow's cubic convolution kernel with a = -0.5.
func bicubicFilter(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if x < 1 { // ((a+2)x - (a+3)) x x + 1, every product rounded
		p := float64((bicubicA+2)*x) - (bicubicA + 3)
		return float64(p*x*x) + 1
	}
	if x < 2 { // (((x-5)x + 8)x - 4) a, every product rounded
		p := float64((x-5)*x) + 8
		return (float64(p*x) - 4) * bicubicA
	}
	return 0
}

// coeffTable holds, for each output index, the first input index, the tap
// count and ksize fixed-point weights (only the first n used).
type coeffTable struct {
	ksize int
	start []int
	n     []int
	k     []int32
}

// newCoeffs is Pillow's precompute_coeffs + normalize_coeffs_8bpc for a
// box covering the whole input axis.
func newCoeffs(inSize, outSize int) coeffTable {
	scale := float64(inSize) / float64(outSize) // Pillow: (double)(float box width) / out
	fs := max(scale, 1.0)
	support := float64(bicubicSup * fs)
	ksize := int(math.Ceil(support))*2 + 1
	t := coeffTable{ksize: ksize, start: make([]int, outSize), n: make([]int, outSize), k: make([]int32, outSize*ksize)}
	w := make([]float64, ksize)
	ss := 1.0 / fs
	for xx := range outSize {
		center := float64((float64(xx) + 0.5) * scale)
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), inSize) - xmin
		var ww float64
		for x := range xmax {
			w[x] = bicubicFilter((float64(x+xmin) - center + 0.5) * ss)
			ww += w[x]
		}
		kk := t.k[xx*ksize : xx*ksize+ksize]
		for x := range xmax {
			v := w[x]
			if ww != 0 {
				v /= ww
			}
			kk[x] = toFixed(v)
		}
		t.start[xx], t.n[xx] = xmin, xmax
	}
	return t
}

// toFixed rounds a weight to 22-bit fixed point the way C does it:
// (int)(v*2^22 +/- 0.5), truncating toward zero.
func toFixed(v float64) int32 {
	if v < 0 {
		return int32(-0.5 + float64(v*(1<<precisionBits)))
	}
	return int32(0.5 + float64(v*(1<<precisionBits)))
}

// clip8 is Pillow's clip8: arithmetic shift of the signed accumulator, clamp.
func clip8(acc int32) uint8 {
	v := acc >> precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// resizeBicubic resizes src to w x h exactly like Pillow's
// Image.resize((w, h), Image.BICUBIC) on an RGB image. Sizes must be
// positive. A same-size resize returns a copy.
func resizeBicubic(src *RGB, w, h int) *RGB {
	if w <= 0 || h <= 0 || src == nil || src.W <= 0 || src.H <= 0 || len(src.Pix) != src.W*src.H*3 {
		panic(fmt.Sprintf("imageproc: resizeBicubic to %dx%d of an invalid image", w, h))
	}
	cur := src
	if w != src.W {
		cur = resizeHorizontal(cur, w)
	}
	if h != src.H {
		cur = resizeVertical(cur, h)
	}
	if cur == src {
		cur = &RGB{W: src.W, H: src.H, Pix: append([]uint8(nil), src.Pix...)}
	}
	return cur
}

// resizeHorizontal resamples every row of src to width w.
func resizeHorizontal(src *RGB, w int) *RGB {
	t := newCoeffs(src.W, w)
	dst := &RGB{W: w, H: src.H, Pix: make([]uint8, w*src.H*3)}
	par.Ranges(src.H, 16, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			in := src.Pix[y*src.W*3 : (y+1)*src.W*3]
			out := dst.Pix[y*w*3 : (y+1)*w*3]
			horizontalRow(out, in, &t)
		}
	})
	return dst
}

func horizontalRow(out, in []uint8, t *coeffTable) {
	const half = 1 << (precisionBits - 1)
	for xx := range t.start {
		k := t.k[xx*t.ksize : xx*t.ksize+t.n[xx]]
		px := in[t.start[xx]*3 : (t.start[xx]+len(k))*3]
		s0, s1, s2 := int32(half), int32(half), int32(half)
		for i, kv := range k {
			p := px[i*3 : i*3+3 : i*3+3]
			s0 += int32(p[0]) * kv
			s1 += int32(p[1]) * kv
			s2 += int32(p[2]) * kv
		}
		out[xx*3], out[xx*3+1], out[xx*3+2] = clip8(s0), clip8(s1), clip8(s2)
	}
}

// resizeVertical resamples every column of src to height h, accumulating
// whole rows so the inner loop runs along contiguous memory.
func resizeVertical(src *RGB, h int) *RGB {
	t := newCoeffs(src.H, h)
	stride := src.W * 3
	dst := &RGB{W: src.W, H: h, Pix: make([]uint8, stride*h)}
	par.Ranges(h, 16, func(lo, hi int) {
		acc := make([]int32, stride)
		for y := lo; y < hi; y++ {
			verticalRow(dst.Pix[y*stride:(y+1)*stride], src.Pix, stride, acc, &t, y)
		}
	})
	return dst
}

func verticalRow(out, pix []uint8, stride int, acc []int32, t *coeffTable, y int) {
	const half = 1 << (precisionBits - 1)
	for i := range acc {
		acc[i] = half
	}
	k := t.k[y*t.ksize : y*t.ksize+t.n[y]]
	for i, kv := range k {
		row := pix[(t.start[y]+i)*stride : (t.start[y]+i+1)*stride]
		row = row[:len(acc)]
		for j, p := range row {
			acc[j] += int32(p) * kv
		}
	}
	for j, a := range acc {
		out[j] = clip8(a)
	}
}
