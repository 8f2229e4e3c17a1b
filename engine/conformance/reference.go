// reference.go: float64 reference versions of every primitive, written as the plainest loops:
// what every backend (the CPU included) is held to by the table of cases.go.
//
// Invariant: each Ref function is the spec's formula, read off section 5/6 of
// shared/spec/qwen3-vl-vision.md, in float64, with no blocking and no shortcut: rope pairs i
// with i+hd/2 (halves), attention stays inside each segment, GELU tanh and erf are the two
// formulas named by backend.GELUForm, LayerNorm uses the biased variance.
// Mutation that would silently break it: "simplifying" a Ref function to call the backend's own
// code; parity would then compare the code with itself and prove nothing.
package conformance

import (
	"math"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// RefWiden returns the float32 values of a weight, widened by dtype.DecodeF32: the
// same bits a backend must compute with.
func RefWiden(w backend.Weight) []float32 {
	out := make([]float32, w.Elems())
	dtype.DecodeF32(out, w.Bytes(), w.DType)
	return out
}

// RefMatMul returns y[r,o] = sum_i x[r,i]*w[o,i] + bias[o] (bias may be nil); w is [out,in].
func RefMatMul(x, w, bias []float32, rows, in, out int) []float64 {
	y := make([]float64, rows*out)
	for r := 0; r < rows; r++ {
		for o := 0; o < out; o++ {
			s := 0.0
			for i := 0; i < in; i++ {
				s += float64(x[r*in+i]) * float64(w[o*in+i])
			}
			if bias != nil {
				s += float64(bias[o])
			}
			y[r*out+o] = s
		}
	}
	return y
}

// RefLayerNorm returns (x-mean)/sqrt(var+eps)*w + b per row, biased variance over cols.
func RefLayerNorm(x, w, b []float32, rows, cols int, eps float64) []float64 {
	y := make([]float64, rows*cols)
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		mean := 0.0
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(cols)
		variance := 0.0
		for _, v := range row {
			d := float64(v) - mean
			variance += d * d
		}
		variance /= float64(cols) // biased: divide by n, not n-1
		inv := 1 / math.Sqrt(variance+eps)
		for i, v := range row {
			y[r*cols+i] = (float64(v)-mean)*inv*float64(w[i]) + float64(b[i])
		}
	}
	return y
}

// RefRMSNorm is x/sqrt(mean(x^2)+eps)*w per row, in float64.
func RefRMSNorm(x, w []float32, rows, cols int, eps float64) []float64 {
	y := make([]float64, rows*cols)
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		ss := 0.0
		for _, v := range row {
			ss += float64(v) * float64(v)
		}
		inv := 1 / math.Sqrt(ss/float64(cols)+eps)
		for i, v := range row {
			y[r*cols+i] = float64(v) * inv * float64(w[i])
		}
	}
	return y
}

// RefFillColumns is x with columns [c0, c1) set to 0, or to each column's mean over the rows.
func RefFillColumns(x []float32, rows, stride, c0, c1 int, mean bool) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	for c := c0; c < c1; c++ {
		m := 0.0
		if mean {
			for r := range rows {
				m += float64(x[r*stride+c])
			}
			m /= float64(rows)
		}
		for r := range rows {
			y[r*stride+c] = m
		}
	}
	return y
}

// RefMul returns dst * src.
func RefMul(dst, src []float32) []float64 {
	y := make([]float64, len(dst))
	for i := range dst {
		y[i] = float64(dst[i]) * float64(src[i])
	}
	return y
}

// RefGELU applies the named GELU to every element.
func RefGELU(x []float32, form backend.GELUForm) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = RefGELUScalar(float64(v), form)
	}
	return y
}

// RefGELUScalar is one GELU: TANH = 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))) ("gelu_pytorch_tanh",
// the block MLP); ERF = 0.5x(1+erf(x/sqrt(2))) (nn.GELU(), the mergers).
func RefGELUScalar(x float64, form backend.GELUForm) float64 {
	switch form {
	case backend.GELUTanh:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	case backend.GELUErf:
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	case backend.GELUQuick:
		return x / (1 + math.Exp(-1.702*x))
	case backend.GELUSiLU:
		return x / (1 + math.Exp(-x))
	}
	panic("cpu: RefGELUScalar: unknown GELU form")
}

// RefAdd returns dst + src.
func RefAdd(dst, src []float32) []float64 {
	y := make([]float64, len(dst))
	for i := range dst {
		y[i] = float64(dst[i]) + float64(src[i])
	}
	return y
}

// RefRope2D returns a copy of x with the first heads*hd columns of each of seq rows (row
// stride stride) rotated by the halves convention (rotate_half):
//
//	x'[i] = x[i]*cos[i] - x[i+hd/2]*sin[i]   for i <  hd/2
//	x'[i] = x[i]*cos[i] + x[i-hd/2]*sin[i]   for i >= hd/2
//
// per head, with cos and sin rows [seq, hd] shared by all heads. Other elements are copied.
func RefRope2D(x []float32, stride int, cos, sin []float32, seq, heads, hd int) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	half := hd / 2
	for s := 0; s < seq; s++ {
		c := cos[s*hd : (s+1)*hd]
		sn := sin[s*hd : (s+1)*hd]
		for h := 0; h < heads; h++ {
			base := s*stride + h*hd
			for i := 0; i < hd; i++ {
				v := float64(x[base+i])
				if i < half {
					y[base+i] = v*float64(c[i]) - float64(x[base+i+half])*float64(sn[i])
				} else {
					y[base+i] = v*float64(c[i]) + float64(x[base+i-half])*float64(sn[i])
				}
			}
		}
	}
	return y
}

// RefAttention returns o [end, heads*hd], end the largest segment End, with
// o[s, h*hd:(h+1)*hd] = softmax_j(q_s.k_j * scale) v_j over the keys j of s's segment only.
// q, k and v rows have stride stride; rows outside every segment stay zero.
func RefAttention(q, k, v []float32, stride int, segs []backend.Segment, heads, hd int, scale float64) []float64 {
	end := 0
	for _, sg := range segs {
		end = max(end, sg.End)
	}
	D := heads * hd
	o := make([]float64, end*D)
	for _, sg := range segs {
		keys := sg.Keys() // the segment's own rows, or its key range apart
		scores := make([]float64, keys.Len())
		for h := 0; h < heads; h++ {
			for s := sg.Start; s < sg.End; s++ {
				qs := q[s*stride+h*hd:]
				m := math.Inf(-1)
				for j := keys.Start; j < keys.End; j++ {
					ks := k[j*stride+h*hd:]
					dot := 0.0
					for d := 0; d < hd; d++ {
						dot += float64(qs[d]) * float64(ks[d])
					}
					scores[j-keys.Start] = dot * scale
					m = math.Max(m, dot*scale)
				}
				sum := 0.0
				for j := range scores {
					scores[j] = math.Exp(scores[j] - m)
					sum += scores[j]
				}
				for d := 0; d < hd; d++ {
					acc := 0.0
					for j := keys.Start; j < keys.End; j++ {
						acc += scores[j-keys.Start] * float64(v[j*stride+h*hd+d])
					}
					o[s*D+h*hd+d] = acc / sum
				}
			}
		}
	}
	return o
}

// RelDiff is max|got-want| / max|want|: the parity measure of the op tests (max|got-want| when
// want is all zero). NaN anywhere in got gives +Inf.
func RelDiff(got []float32, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	maxDiff, maxRef := 0.0, 0.0
	for i, w := range want {
		g := float64(got[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.Inf(1)
		}
		maxDiff = math.Max(maxDiff, math.Abs(g-w))
		maxRef = math.Max(maxRef, math.Abs(w))
	}
	if maxRef == 0 {
		return maxDiff
	}
	return maxDiff / maxRef
}
