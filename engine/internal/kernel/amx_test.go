package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
)

// splitRef is SplitBF16x3's contract for one value: hi, mid, lo as bfloat16 bits.
func splitRef(x float32) (hi, mid, lo uint16) {
	h := math.Float32frombits(math.Float32bits(x) &^ 0xffff)
	r := x - h
	m := math.Float32frombits(math.Float32bits(r) &^ 0xffff)
	l := r - m
	return uint16(math.Float32bits(h) >> 16), uint16(math.Float32bits(m) >> 16), uint16(math.Float32bits(l) >> 16)
}

func bf(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// amxValues: every binade a float32 activation can hold, signs, zeros and the extremes.
func amxValues(r *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32 * (1 << 23), 1 + 1.0/(1<<23), -(1 + 1.0/(1<<22)), 3.1415927}
	v := make([]float32, n)
	for i := range v {
		if i < len(special) {
			v[i] = special[i]
			continue
		}
		v[i] = math.Float32frombits(uint32(r.Uint64()&0x807fffff) | uint32(r.IntN(250)+3)<<23)
	}
	return v
}

// TestSplitBF16x3: the three pieces are the reference's bits, they add up to x exactly (for
// |x| >= 2^-100; below, lo is subnormal and loses bits, within 2^-126), and they lie where
// AMXDot32x32 reads them.
func TestSplitBF16x3(t *testing.T) {
	if !HasAMX {
		t.Skip("no AMX in this process (CPU, OS or architecture)")
	}
	r := rand.New(rand.NewPCG(1, 2))
	const chunks = 5
	x := amxValues(r, 32*chunks)
	dst := make([]uint16, 3072*chunks)
	SplitBF16x3(&dst[0], &x[0], chunks)
	for i, v := range x {
		c, j := i/32, i%32
		hi, mid, lo := splitRef(v)
		got := [3]uint16{dst[c*3072+j], dst[c*3072+1024+j], dst[c*3072+2048+j]}
		if got != [3]uint16{hi, mid, lo} {
			t.Fatalf("x[%d] = %g (%#08x): pieces %#04x, want %#04x %#04x %#04x", i, v, math.Float32bits(v), got, hi, mid, lo)
		}
		s := bf(hi) + bf(mid) + bf(lo)
		if math.Abs(float64(v)) < 0x1p-100 { // lo below 2^-116: subnormal, cut like the rest
			if math.Abs(s-float64(v)) > 0x1p-126 {
				t.Fatalf("x[%d] = %g: pieces add up to %g", i, v, s)
			}
			continue
		}
		if s != float64(v) {
			t.Fatalf("x[%d] = %g: pieces add up to %g, not exactly x", i, v, s)
		}
	}
	for c := range chunks { // the other tiles of a chunk (rows 16-31's) are not written
		for j := 32; j < 1024; j++ {
			if dst[c*3072+j] != 0 {
				t.Fatalf("chunk %d: wrote outside its row at %d", c, j)
			}
		}
	}
}

// TestAMXDot32x32: every one of the 32 x 32 outputs (all four 16 x 16 tiles, written through a
// row stride wider than the block) within 2^-22 of sum |x*w| of the float64 dot product, and
// closer than that on average: a kernel that dropped the lo piece errs by ~2^-17 of |x|.
func TestAMXDot32x32(t *testing.T) {
	if !HasAMX {
		t.Skip("no AMX in this process (CPU, OS or architecture)")
	}
	r := rand.New(rand.NewPCG(3, 4))
	const chunks, in, ldc = 4, 4 * 32, 40
	x := make([]float32, 32*in)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	w := make([]uint16, 32*in) // W[o, k] as bfloat16
	for i := range w {
		w[i] = uint16(math.Float32bits(float32(r.NormFloat64()*0.05)) >> 16)
	}
	a := make([]uint16, chunks*3072*2)
	for row := range 32 {
		SplitBF16x3(&a[row/16*512+row%16*32], &x[row*in], chunks)
	}
	b := make([]uint16, 2*chunks*512)
	for blk := range 2 {
		Transpose(unsafe.Pointer(&b[blk*chunks*512]), 16, unsafe.Pointer(&w[blk*16*in]), in/2, 16, in/2) // the VNNI tiles
	}
	c := make([]float32, 32*ldc)
	for i := range c {
		c[i] = float32(math.NaN()) // the kernel starts from +0, never from c
	}
	AMXDot32x32(&a[0], &b[0], &b[chunks*512], chunks, &c[0], 4*ldc, 0, &AMXTileConfig)
	var sumErr float64
	for row := range 32 {
		for o := range 32 {
			exact, scale := 0.0, 0.0
			for k := range in {
				p := float64(x[row*in+k]) * bf(w[o*in+k])
				exact += p
				scale += math.Abs(p)
			}
			e := math.Abs(float64(c[row*ldc+o])-exact) / scale
			if !(e <= 0x1p-22) {
				t.Fatalf("row %d col %d: %g, want %g (error %.3g of the scale)", row, o, c[row*ldc+o], exact, e)
			}
			sumErr += e
		}
		for o := 32; o < ldc; o++ {
			if !math.IsNaN(float64(c[row*ldc+o])) {
				t.Fatalf("row %d: wrote column %d, outside the block", row, o)
			}
		}
	}
	if mean := sumErr / 1024; mean > 0x1p-25 {
		t.Errorf("mean error %.3g of the scale, above 2^-25", mean)
	}
}

// TestAMXDot32x32Carry: the dot products cut into calls of 1 and 3 chunks (the second carrying
// the first's sums) have the bits of one call over the 4 chunks.
func TestAMXDot32x32Carry(t *testing.T) {
	if !HasAMX {
		t.Skip("no AMX in this process (CPU, OS or architecture)")
	}
	r := rand.New(rand.NewPCG(5, 6))
	const chunks, in = 4, 4 * 32
	a := make([]uint16, chunks*3072*2)
	x := make([]float32, 32*in)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for row := range 32 {
		SplitBF16x3(&a[row/16*512+row%16*32], &x[row*in], chunks)
	}
	b := make([]uint16, 2*chunks*512)
	for i := range b {
		b[i] = uint16(math.Float32bits(float32(r.NormFloat64()*0.05)) >> 16)
	}
	whole := make([]float32, 32*32)
	AMXDot32x32(&a[0], &b[0], &b[chunks*512], chunks, &whole[0], 128, 0, &AMXTileConfig)
	cut := make([]float32, 32*32)
	for i := range cut {
		cut[i] = float32(math.NaN()) // carry 0 must not read it
	}
	AMXDot32x32(&a[0], &b[0], &b[chunks*512], 1, &cut[0], 128, 0, &AMXTileConfig)
	AMXDot32x32(&a[3072], &b[512], &b[chunks*512+512], chunks-1, &cut[0], 128, 1, &AMXTileConfig)
	for i := range whole {
		if math.Float32bits(whole[i]) != math.Float32bits(cut[i]) {
			t.Fatalf("output %d: %g cut, %g whole", i, cut[i], whole[i])
		}
	}
}

// TestAMXProducts: the probe's four tiles hold rounds x 3 products of their own row half and
// column half (each of its 12 products names its tile, as AMXDot32x32's do).
func TestAMXProducts(t *testing.T) {
	if !HasAMX {
		t.Skip("no AMX in this process (CPU, OS or architecture)")
	}
	const rounds = 5
	bf := func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }
	rowVal := [2]float32{1, 2}   // x rows 0-15, 16-31
	colVal := [2]float32{0.5, 4} // W columns 0-15 (b0), 16-31 (b1)
	a := make([]uint16, 1024)
	for i := range a {
		a[i] = bf(rowVal[i/512])
	}
	b := make([]uint16, 1024)
	for i := range b {
		b[i] = bf(colVal[i/512])
	}
	c := make([]float32, 32*32)
	AMXProducts(&a[0], &b[0], &b[512], rounds, &c[0], 4*32, &AMXTileConfig)
	for i, got := range c {
		r, col := i/32, i%32
		if want := rounds * 3 * 32 * rowVal[r/16] * colVal[col/16]; got != want {
			t.Fatalf("c[%d][%d] = %g, want %g", r, col, got, want)
		}
	}
}

// BenchmarkAMXDot32x32Threads: the tile kernel on 1, 2, 4, ... threads at once, each on its
// own packed pieces (36 k chunks, k 1,152: 216 KiB, L2) and W tiles, GFLOP/s a thread counted
// as the float32 product's 2*32*32*k (the three pieces' work is the kernel's own): the tile
// unit's ceiling per core as more cores run, beside BenchmarkFMA6x32Threads. "products" runs
// the same products with no loads (AMXProducts): the kernel at that rate waits on the unit,
// below it on its loads. On the 16-core device (2026-12-02, two rounds): products 276-321 a
// thread on 1 to 16 threads, the kernel 153-221 (0.55-0.70 of it); another instance of the
// kind that day (patterned data, not random): products 525-580 on 1 thread, the kernel 275-586.
// Those were the kernel before its loads went a piece ahead and its prefetch came (d0036ff); on
// 2026-12-03 this benchmark could not tell the two apart (one instance's tile unit ran 200 or
// 500 a thread from one run to the next): A/B kernels by interleaving them call by call.
func BenchmarkAMXDot32x32Threads(b *testing.B) {
	if !HasAMX {
		b.Skip("no AMX in this process (CPU, OS or architecture)")
	}
	const chunks = 36
	for _, body := range []string{"kernel", "products"} {
		for threads := 1; threads <= runtime.NumCPU(); threads *= 2 {
			b.Run(fmt.Sprintf("%s/threads%d", body, threads), func(b *testing.B) {
				onThreads(b, threads, func() func() {
					a := randBF16(chunks * 3072) // random, not zeros: the unit's power, so its clock, depends on the data
					w := randBF16(2 * chunks * 512)
					c := make([]float32, 32*32)
					if body == "products" {
						return func() { AMXProducts(&a[0], &w[0], &w[chunks*512], chunks, &c[0], 4*32, &AMXTileConfig) }
					}
					return func() { AMXDot32x32(&a[0], &w[0], &w[chunks*512], chunks, &c[0], 4*32, 1, &AMXTileConfig) }
				})
				b.ReportMetric(2*32*32*32*chunks*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s/thread")
			})
		}
	}
}

// randBF16 returns n bfloat16 values of a unit normal (randF32's, truncated).
func randBF16(n int) []uint16 {
	v := make([]uint16, n)
	for i, f := range randF32(n) {
		v[i] = uint16(math.Float32bits(f) >> 16)
	}
	return v
}
