package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestTranspose: Transpose against the scalar transpose on shapes with short row blocks (rows not
// a multiple of 16) and odd strides; every other element of dst, past its rows, columns and
// stride padding, keeps its sentinel.
func TestTranspose(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, sh := range [][4]int{{1, 1, 1, 1}, {32, 72, 3456, 32}, {17, 72, 101, 40}, {5, 9, 13, 7}, {1024, 72, 3456, 1040}, {31, 3, 5, 33}, {16, 16, 16, 16}, {33, 40, 57, 35}, {48, 17, 20, 50}} {
		rows, cols, lds, ldd := sh[0], sh[1], sh[2], sh[3]
		src := make([]float32, (rows-1)*lds+cols)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		dst := make([]float32, cols*ldd+16)
		const sentinel = -7.25
		for i := range dst {
			dst[i] = sentinel
		}
		Transpose(unsafe.Pointer(&dst[0]), ldd, unsafe.Pointer(&src[0]), lds, rows, cols)
		for j := range cols {
			for i := range ldd {
				got, want := dst[j*ldd+i], float32(sentinel)
				if i < rows {
					want = src[i*lds+j]
				}
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v: dst[%d][%d] = %g, want %g", sh, j, i, got, want)
				}
			}
		}
		for i := cols * ldd; i < len(dst); i++ {
			if dst[i] != sentinel {
				t.Fatalf("%v: dst[%d] past the block written", sh, i)
			}
		}
	}
}

// TestDivTranspose: DivTranspose has the scalar loop's bits (float32(float64(x) / s)) for every
// query and dimension, including NaN, Inf, subnormal quotients and a zero sum, on partial
// query and dimension counts, and writes nothing past either.
func TestDivTranspose(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(9, 10))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0x1p-140, -0x1p-149, 0, float32(math.Copysign(0, -1)), math.MaxFloat32}
	for _, sh := range [][3]int{{32, 72, 1152}, {7, 72, 80}, {1, 1, 1}, {32, 9, 16}, {19, 40, 41}, {16, 16, 16}, {17, 33, 33}} {
		n, hd, ldo := sh[0], sh[1], sh[2]
		ob := make([]float32, hd*32)
		for i := range ob {
			ob[i] = float32(r.NormFloat64() * 1e3)
			if r.IntN(7) == 0 {
				ob[i] = specials[r.IntN(len(specials))]
			}
		}
		var sum [32]float64
		for c := range sum {
			sum[c] = r.Float64() * 5e3
		}
		sum[0], sum[1%n] = 0, 1e300 // a zero sum and a quotient below float32's range
		const sentinel = -3.5
		out := make([]float32, n*ldo+16)
		for i := range out {
			out[i] = sentinel
		}
		DivTranspose(&out[0], ldo, &ob[0], &sum[0], n, hd)
		for c := range n {
			for d := range ldo {
				got, want := out[c*ldo+d], float32(sentinel)
				if d < hd {
					want = float32(float64(ob[d*32+c]) / sum[c])
				}
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v: out[%d][%d] = %g (%#x), want %g (%#x)", sh, c, d, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
		for i := n * ldo; i < len(out); i++ {
			if out[i] != sentinel {
				t.Fatalf("%v: out[%d] past the queries written", sh, i)
			}
		}
	}
}
