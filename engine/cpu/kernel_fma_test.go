// kernel_fma_test.go: the two MatMul kernels (generic kernel.Dot3x2, packed AVX2+FMA) side by side.
//
// Invariant: forEachKernel runs a test body once with the generic kernel and, where the CPU
// has AVX2+FMA, once with the assembly kernel, restoring the start-up choice afterwards; the
// two kernels agree within 1e-6 (RelDiff) on odd shapes; within one kernel a row's bits do not
// depend on how the caller cuts the rows into calls; and the FMA path really rounds once per
// step while the generic one rounds twice.
// Mutation that would silently break it: a forEachKernel that sets kernel.UseFMA but never restores
// it (later tests would silently run one kernel only), or an odd-shape test whose shapes are
// multiples of 6 x 16 (the short-tile and short-strip code would never run).
package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// forEachKernel runs f as a subtest per available MatMul kernel. Not for parallel tests:
// kernel.UseFMA is package state.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	if !kernel.HasFMA {
		t.Log("no AVX2+FMA kernel on this CPU/architecture: generic kernel only")
	}
	kernel.EachKernel(func(name string) { t.Run(name, f) })
}

// matMulWith runs y = x W^T + b on a 2-thread backend with the given kernel.
func matMulWith(t *testing.T, fma bool, x []float32, w, bias backend.Weight, rows, in, out int) []float32 {
	saved, savedAMX := kernel.UseFMA, kernel.UseAMX
	defer func() { kernel.UseFMA, kernel.UseAMX = saved, savedAMX }()
	kernel.UseFMA, kernel.UseAMX = fma, fma && savedAMX
	be := New(2)
	defer be.Close()
	y := conformance.Alloc(be, rows*out)
	be.MatMul(y, conformance.Upload(be, x), w, bias, rows, in, out)
	return conformance.Download(be, y, rows*out)
}

// TestFMAKernelMatchesGeneric: on odd shapes the two kernels agree within 1e-6 relative to
// the scale of the sums, max over outputs of sum_i |x[r,i]*W[o,i]| + |b[o]| (the quantity
// that bounds a float32 dot product's rounding error). Normalizing by max|y| instead fails on
// the 1-output shapes whenever that single sum happens to cancel (1.2e-6 seen at rows 1, in
// 1153, out 1): a property of the sum, not of either kernel. Each kernel also passes parity.
func TestFMAKernelMatchesGeneric(t *testing.T) {
	if !kernel.HasFMA {
		t.Skip("no AVX2+FMA on this CPU/architecture")
	}
	for _, d := range []dtype.DType{dtype.F32, dtype.BF16, dtype.F16} {
		for _, rows := range []int{1, 5, 33} {
			for _, in := range []int{17, 72, 1153} {
				for _, out := range []int{1, 7, 100} {
					name := fmt.Sprintf("%s/rows%d/in%d/out%d", d, rows, in, out)
					r := rand.New(rand.NewPCG(uint64(rows*in), uint64(out)))
					w, wf := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), d, 0, out, in)
					bias, bf := testSuite.Weight("b", conformance.RandVals(r, out, 0.5), d, 0, out)
					xv := conformance.RandVals(r, rows*in, 1)
					gen := matMulWith(t, false, xv, w, bias, rows, in, out)
					fma := matMulWith(t, true, xv, w, bias, rows, in, out)
					scale, worst := 0.0, 0.0
					for i := range gen {
						row, o := i/out, i%out
						s := math.Abs(float64(bf[o]))
						for k := range in {
							s += math.Abs(float64(xv[row*in+k]) * float64(wf[o*in+k]))
						}
						scale = max(scale, s)
						worst = max(worst, math.Abs(float64(fma[i])-float64(gen[i])))
					}
					if worst > 1e-6*scale {
						t.Errorf("%s: fma vs generic differ by %.3g, %.3g of the scale > 1e-6", name, worst, worst/scale)
					}
					want := conformance.RefMatMul(xv, wf, bf, rows, in, out)
					for _, got := range [][]float32{gen, fma} {
						if dd, ok := parityOK(got, want, conformance.TolMatMul); !ok {
							t.Errorf("%s: RelDiff %.3g vs reference", name, dd)
						}
					}
				}
			}
		}
	}
}

// TestMatMulRowCutInvariance: computing rows [0, R) in one call or in calls of 1, 5, 7, 13
// rows gives the same bits (the package-level form of the engine's tile invariance).
func TestMatMulRowCutInvariance(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		be := New(2)
		defer be.Close()
		const rows, in, out = 40, 1153, 100 // in > fmaDepth and > 2 k-blocks; out not a multiple of 16
		for _, d := range []dtype.DType{dtype.F32, dtype.BF16} {
			r := rand.New(rand.NewPCG(5, 6))
			w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), d, 0, out, in)
			bias, _ := testSuite.Weight("b", conformance.RandVals(r, out, 0.5), d, 0, out)
			xv := conformance.RandVals(r, rows*in, 1)
			x := conformance.Upload(be, xv)
			y := conformance.Alloc(be, rows*out)
			be.MatMul(y, x, w, bias, rows, in, out)
			whole := conformance.Download(be, y, rows*out)
			for _, cut := range []int{1, 5, 7, 13} {
				yc := conformance.Alloc(be, rows*out)
				for r0 := 0; r0 < rows; r0 += cut {
					n := min(cut, rows-r0)
					be.MatMul(yc.At(r0*out), x.At(r0*in), w, bias, n, in, out)
				}
				if i, ok := sameBits(whole, conformance.Download(be, yc, rows*out)); !ok {
					t.Errorf("%s cut %d: element %d differs from the single call", d, cut, i)
				}
			}
		}
	})
}

// TestFMARoundsOnce pins the numerics: with x = [1, a], W = [-(1+2^-11), a], a = 1+2^-12,
// the exact a*a = 1 + 2^-11 + 2^-24 is a tie in float32 that rounds to 1 + 2^-11. The generic
// kernel rounds the product first and returns 0; the FMA chain keeps it exact and returns
// 2^-24.
func TestFMARoundsOnce(t *testing.T) {
	a := float32(1 + 1.0/4096)
	wv := []float32{-(1 + 1.0/2048), a}
	xv := []float32{1, a}
	want := map[bool]float32{false: 0, true: float32(math.Ldexp(1, -24))}
	forEachKernel(t, func(t *testing.T) {
		be := New(1)
		defer be.Close()
		w, _ := testSuite.Weight("w", wv, dtype.F32, 0, 1, 2)
		y := conformance.Alloc(be, 1)
		be.MatMul(y, conformance.Upload(be, xv), w, backend.Weight{}, 1, 2, 1)
		got := conformance.Download(be, y, 1)[0]
		if got != want[kernel.UseFMA] {
			t.Errorf("kernel.UseFMA %v: got %g, want %g", kernel.UseFMA, got, want[kernel.UseFMA])
		}
	})
}

// TestAVX512MatchesAVX2Bits: the 32-lane kernel runs FMA6x16's lane chains, so MatMul gives the
// same bits with either, on shapes whose outputs leave short strips of both widths (out 7,
// 40, 100) and rows that leave short tiles, across k-blocks (in > fmaDepth).
func TestAVX512MatchesAVX2Bits(t *testing.T) {
	if !kernel.HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	saved, saved512 := kernel.UseFMA, kernel.UseAVX512
	defer func() { kernel.UseFMA, kernel.UseAVX512 = saved, saved512 }()
	kernel.UseFMA = true
	for _, d := range []dtype.DType{dtype.F32, dtype.BF16} {
		for _, s := range [][3]int{{1, 17, 7}, {13, 1153, 40}, {33, 72, 100}, {8, 2100, 33}} {
			rows, in, out := s[0], s[1], s[2]
			r := rand.New(rand.NewPCG(uint64(rows), uint64(in*out)))
			w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), d, 0, out, in)
			bias, _ := testSuite.Weight("b", conformance.RandVals(r, out, 0.5), d, 0, out)
			xv := conformance.RandVals(r, rows*in, 1)
			kernel.UseAVX512 = false
			y16 := matMulWith(t, true, xv, w, bias, rows, in, out)
			kernel.UseAVX512 = true
			y32 := matMulWith(t, true, xv, w, bias, rows, in, out)
			if i, ok := sameBits(y16, y32); !ok {
				t.Errorf("%s %v: element %d: avx2 %g, avx512 %g", d, s, i, y16[i], y32[i])
			}
		}
	}
}

// TestPackStripFastMatchesGeneric: the k-outer packer (and on AVX-512 the gathers) gives
// packStrip's values exactly, padded rows included, for every dtype, both strip widths, short
// strips and k-blocks that start inside a row or have an odd length; it declines a weight at
// an odd byte offset, which packStrip takes.
func TestPackStripFastMatchesGeneric(t *testing.T) {
	forEachKernel(t, testPackStripFast) // the AVX-512 gathers and the scalar loop
}

func testPackStripFast(t *testing.T) {
	const in, out = 1101, 45 // the k-block from 1024 has an odd length: a BF16 pair left over
	for _, d := range []dtype.DType{dtype.F32, dtype.BF16, dtype.F16} {
		for _, off := range []int{0, 1} {
			r := rand.New(rand.NewPCG(uint64(off), 9))
			w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), d, off, out, in)
			m := &mmJob{w: w, in: in, out: out}
			for _, nr := range []int{16, 32} {
				for _, c := range [][3]int{{0, 45, 0}, {32, 45, 1024}, {16, 40, 7}} { // c0, c1, k0
					kn := min(fmaDepth, in-c[2])
					fast := make([]float32, nr*kn)
					for i := range fast {
						fast[i] = float32(math.NaN()) // the padded rows too
					}
					took := packStripFast(fast, nr, w, in, c[0], min(nr, c[1]-c[0]), c[2], kn)
					wantTake := off%d.Size() == 0
					if took != wantTake {
						t.Errorf("%s offset %d: packStripFast took it: %v, want %v", d, off, took, wantTake)
						continue
					}
					if !took {
						continue
					}
					slow := make([]float32, nr*kn)
					for i := range slow {
						slow[i] = float32(math.NaN()) // every element must be written
					}
					packStrip(slow, make([]float32, kn), nr, m, c[0], c[1], c[2])
					if i, ok := sameBits(fast, slow); !ok {
						t.Errorf("%s nr %d strip %v: element %d: fast %g, generic %g", d, nr, c, i, fast[i], slow[i])
					}
				}
			}
		}
	}
}

// TestRowBlock: one row block per call where the panels keep the threads busy, more (of at
// least fmaRows rows) where they do not, none longer than fmaMaxRows, always multiples of the
// kernel's 6 rows covering every row. With W packed for the pass, blocks of at least
// packedRows rows until the last round of tasks is 90% full (proj at 1,024 rows on 16
// threads: 4 blocks, not 1), and nothing changes where it already is (2 threads).
func TestRowBlock(t *testing.T) {
	for _, c := range []struct {
		rows, panels, threads int
		packed                bool
		want                  int
	}{
		{1024, 54, 2, false, 1026}, {5120, 54, 2, false, 1026}, {5120, 18, 4, false, 1026}, {1700, 2, 2, false, 570},
		{5, 1, 8, false, 6}, {1030, 1, 16, false, 1032}, {2000, 1, 16, false, 672}, {65536, 100, 2, false, 1026},
		{1024, 18, 16, false, 1026}, {1024, 18, 16, true, 258}, {1024, 54, 16, true, 516}, {1024, 68, 16, true, 516},
		{1024, 18, 2, true, 1026}, {1024, 54, 2, true, 1026}, {5120, 18, 16, true, 642}, {5, 1, 8, true, 6},
		{100, 18, 16, true, 102},
	} {
		got := rowBlock(c.rows, c.panels, c.threads, c.packed)
		if got%fmaMR != 0 || got*chunks(c.rows, got) < c.rows || got > max(fmaMaxRows, fmaMR) {
			t.Errorf("rowBlock(%d, %d, %d, %v) = %d: not a multiple of 6 covering the rows", c.rows, c.panels, c.threads, c.packed, got)
		}
		if c.want >= 0 && got != c.want {
			t.Errorf("rowBlock(%d, %d, %d, %v) = %d, want %d", c.rows, c.panels, c.threads, c.packed, got, c.want)
		}
	}
}

// TestFlashTasks: every (segment, head, query) in exactly one task, tasks whole attQueries
// blocks (but a segment's last), none past flashTaskFLOPs unless it is one block (the bound on
// how long a cancel waits) nor, where a head is cut anyway, past flashTailFLOPs (the loop's
// tail), and one task per head where the heads alone keep the threads busy.
func TestFlashTasks(t *testing.T) {
	for _, c := range []struct {
		segs           []backend.Segment
		heads, threads int
		wantPerHead    int // tasks per (segment, head); 0: not checked
	}{
		{conformance.Cuts(0, 5120), 16, 2, 1},
		{conformance.Cuts(0, 1024), 16, 16, 3},  // 4 per head asked, 256 queries rounded up to 384
		{conformance.Cuts(0, 5120), 16, 16, 27}, // cut anyway: tasks within flashTailFLOPs, 192 queries
		{conformance.Cuts(0, 5120), 16, 8, 27},
		{conformance.Cuts(0, 65536), 16, 2, 0},
		{conformance.Cuts(0, 1, 100, 700), 3, 7, 0},
	} {
		const hd = 72
		tasks := flashTasks(c.segs, c.heads, hd, c.threads)
		seen := map[[2]int]int{}
		perHead := map[[2]int]int{}
		for _, tk := range tasks {
			n := tk.q1 - tk.q0
			if tk.q1 != tk.seg.End && n%attQueries != 0 {
				t.Errorf("%v: task %v is not whole query blocks", c.segs, tk)
			}
			bound := flashTaskFLOPs
			if max(1, chunks(4*c.threads, len(c.segs)*c.heads)) > 1 { // a head cut across threads anyway
				bound = flashTailFLOPs
			}
			if flops := 4 * float64(n) * float64(tk.seg.Keys().Len()) * hd; flops > bound && n > attQueries {
				t.Errorf("%v threads %d: task %v does %.3g FLOPs, more than %.3g", c.segs, c.threads, tk, flops, bound)
			}
			perHead[[2]int{tk.seg.Start, tk.head}]++
			for q := tk.q0; q < tk.q1; q++ {
				seen[[2]int{tk.head, q}]++
			}
		}
		for _, sg := range c.segs {
			for h := range c.heads {
				for q := sg.Start; q < sg.End; q++ {
					if seen[[2]int{h, q}] != 1 {
						t.Fatalf("%v: head %d query %d in %d tasks", c.segs, h, q, seen[[2]int{h, q}])
					}
				}
				if c.wantPerHead > 0 && perHead[[2]int{sg.Start, h}] != c.wantPerHead {
					t.Errorf("%v threads %d: head %d in %d tasks, want %d", c.segs, c.threads, h, perHead[[2]int{sg.Start, h}], c.wantPerHead)
				}
			}
		}
	}
}

// TestFlashWaves: where an image's heads are fewer than 4 tasks a thread, the call runs in
// waves of at most `threads` (segment, head) pairs, each pair in exactly one wave and slot,
// every task of a wave naming the slot of its own pair, every (segment, head, query) in
// exactly one task, and 4 tasks a thread asked per wave (more where flashTailFLOPs cuts); where the pairs alone keep the
// threads busy there are no waves (the per-worker packing already packs each pair once).
func TestFlashWaves(t *testing.T) {
	const hd = 72
	for _, c := range []struct {
		segs           []backend.Segment
		heads, threads int
		waves          int // 0: none
		tasks          int // tasks in all (0: not checked)
	}{
		{conformance.Cuts(0, 1024), 16, 16, 1, 48},      // 4 a head asked, 256 queries rounded up to 384
		{conformance.Cuts(0, 5120), 16, 8, 2, 432},      // 8 heads a wave, each cut within flashTailFLOPs: 27 tasks of 192 queries
		{conformance.Cuts(0, 5120), 16, 16, 1, 432},     // (4 a head asked: 1,280 queries, past the bound)
		{conformance.Cuts(0, 512, 1024), 16, 16, 2, 96}, // two frames: 128 queries a task asked, 192 given
		{conformance.Cuts(0, 1, 1, 700), 3, 5, 2, 0},    // an empty segment has no pair
		{conformance.Cuts(0, 5120), 16, 2, 0, 0},
		{conformance.Cuts(0, 1024), 16, 1, 0, 0},
		{conformance.Cuts(0, 64, 128, 192, 256, 320, 384, 448, 512), 16, 16, 0, 0}, // windows
	} {
		waves := flashWaves(c.segs, c.heads, hd, c.threads)
		if len(waves) != c.waves {
			t.Errorf("%v, %d heads, %d threads: %d waves, want %d", c.segs, c.heads, c.threads, len(waves), c.waves)
		}
		if len(waves) == 0 {
			continue
		}
		tasks := 0
		seen := map[[2]int]int{}
		pairs := map[[2]int]int{}
		for _, w := range waves {
			if len(w.pairs) > c.threads {
				t.Errorf("%v: a wave of %d pairs on %d threads (one scratch a pair)", c.segs, len(w.pairs), c.threads)
			}
			for _, p := range w.pairs {
				pairs[[2]int{p.seg.Start, p.head}]++
			}
			tasks += len(w.tasks)
			for _, tk := range w.tasks {
				if p := w.pairs[tk.slot]; p.seg != tk.seg || p.head != tk.head {
					t.Fatalf("%v: task %v reads slot %d, which holds segment %v head %d", c.segs, tk, tk.slot, p.seg, p.head)
				}
				for q := tk.q0; q < tk.q1; q++ {
					seen[[2]int{tk.head, q}]++
				}
			}
		}
		if c.tasks > 0 && tasks != c.tasks {
			t.Errorf("%v, %d heads, %d threads: %d tasks, want %d", c.segs, c.heads, c.threads, tasks, c.tasks)
		}
		for _, sg := range c.segs {
			for h := range c.heads {
				if n := pairs[[2]int{sg.Start, h}]; sg.Len() > 0 && n != 1 {
					t.Errorf("%v: segment %v head %d packed in %d waves", c.segs, sg, h, n)
				}
				for q := sg.Start; q < sg.End; q++ {
					if seen[[2]int{h, q}] != 1 {
						t.Fatalf("%v: head %d query %d in %d tasks", c.segs, h, q, seen[[2]int{h, q}])
					}
				}
			}
		}
	}
}

// TestPackCacheForgetsAtCommit: within a pass a weight is widened once (a change to its bytes
// that no pass may make is not seen: the proof that the cache is used); after Commit the next
// call widens the bytes as they are now. And the cached path gives the per-task path's bits.
func TestPackCacheForgetsAtCommit(t *testing.T) {
	if !kernel.HasFMA {
		t.Skip("no packed path on this CPU/architecture")
	}
	const rows, in, out = 2 * fmaRows, 300, 70 // two row blocks: packed from the first call (firstOfOneBlock)
	r := rand.New(rand.NewPCG(15, 16))
	w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), dtype.F32, 0, out, in)
	be := New(2)
	defer be.Close()
	x := conformance.Upload(be, conformance.RandVals(r, rows*in, 1))
	run := func() []float32 {
		y := conformance.Alloc(be, rows*out)
		be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
		return conformance.Download(be, y, rows*out)
	}
	before := run()
	saved := append([]byte(nil), w.Bytes()...)
	newVals := conformance.RandVals(r, out*in, 0.1)
	copy(w.Region.Bytes[w.Offset:], dtype.EncodeF32(nil, newVals, dtype.F32))
	defer copy(w.Region.Bytes[w.Offset:], saved)
	if i, ok := sameBits(before, run()); !ok {
		t.Errorf("within the pass the weight was widened again (element %d changed): no cache", i)
	}
	be.Commit()
	after := run()
	want := conformance.RefMatMul(conformance.Download(be, x, rows*in), newVals, nil, rows, in, out)
	if d, ok := parityOK(after, want, conformance.TolMatMul); !ok {
		t.Errorf("after Commit: RelDiff %.3g against the new weights: the old widening was used", d)
	}
	savedMax := packCacheMax
	defer func() { packCacheMax = savedMax }()
	packCacheMax = 0 // every task widens its own panel
	be.Commit()
	if i, ok := sameBits(after, run()); !ok {
		t.Errorf("per-task widening differs from the cached one at element %d", i)
	}
}

// TestRopeAVX512SameBits: the vector rope gives ropeHead's bits (each product rounded before
// its add in both) at every head dim the models use and at odd halves (masked tails).
func TestRopeAVX512SameBits(t *testing.T) {
	if !kernel.HasAVX512 {
		t.Skip("no AVX-512 on this CPU/architecture")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for _, hd := range []int{2, 6, 16, 34, 64, 72, 80, 128} {
		x := conformance.RandVals(r, hd, 2)
		c, s := conformance.RandVals(r, hd, 1), conformance.RandVals(r, hd, 1)
		a, b := append([]float32(nil), x...), append([]float32(nil), x...)
		ropeHead(a, c, s)
		ropeHeadAVX512(b, c, s)
		if i, ok := sameBits(a, b); !ok {
			t.Errorf("hd %d: element %d: scalar %v, AVX-512 %v", hd, i, a[i], b[i])
		}
	}
}

// unfused runs the epilogue as separate ops (MatMul, GELU, Add), as a backend that does not
// fuse it would.
type unfused struct{ *Backend }

func (u unfused) MatMulEpilogue(y, x backend.View, w, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	u.MatMul(y, x, w, bias, rows, in, out)
	backend.ApplyEpilogue(u, y, rows*out, ep)
}

// TestEpilogueSameBits: the fused epilogue (GELU, residual) gives the bits of the separate
// ops, under every kernel, on shapes with short tiles, short strips and several k-blocks.
func TestEpilogueSameBits(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		for _, c := range []struct {
			rows, in, out int
			ep            func(res backend.View) backend.Epilogue
			name          string
		}{
			{13, 1100, 70, func(backend.View) backend.Epilogue { return backend.Epilogue{GELU: true, Form: backend.GELUTanh} }, "gelu tanh"},
			{7, 300, 33, func(backend.View) backend.Epilogue { return backend.Epilogue{GELU: true, Form: backend.GELUErf} }, "gelu erf"},
			{20, 2100, 45, func(r backend.View) backend.Epilogue { return backend.Epilogue{Residual: r} }, "residual"},
		} {
			r := rand.New(rand.NewPCG(uint64(c.rows), uint64(c.out)))
			w, _ := testSuite.Weight("w", conformance.RandVals(r, c.out*c.in, 0.1), dtype.BF16, 0, c.out, c.in)
			bias, _ := testSuite.Weight("b", conformance.RandVals(r, c.out, 0.5), dtype.BF16, 0, c.out)
			xv, resv := conformance.RandVals(r, c.rows*c.in, 1), conformance.RandVals(r, c.rows*c.out, 1)
			var ys, res [2][]float32
			for k, be := range []backend.Backend{New(2), unfused{New(2)}} {
				x, y := conformance.Upload(be, xv), conformance.Alloc(be, c.rows*c.out)
				rv := conformance.Upload(be, resv)
				be.MatMulEpilogue(y, x, w, bias, c.rows, c.in, c.out, c.ep(rv))
				ys[k], res[k] = conformance.Download(be, y, c.rows*c.out), conformance.Download(be, rv, c.rows*c.out)
				be.Close()
			}
			if i, ok := sameBits(ys[0], ys[1]); !ok {
				t.Errorf("%s: y element %d: fused %v, separate %v", c.name, i, ys[0][i], ys[1][i])
			}
			if i, ok := sameBits(res[0], res[1]); !ok {
				t.Errorf("%s: residual element %d: fused %v, separate %v", c.name, i, res[0][i], res[1][i])
			}
		}
	})
}

// TestPackCacheReleasedAtClose: Close releases the cache's memory (twice is harmless), and a
// heap slice handed to hugeFree is never unmapped (it is the collector's).
func TestPackCacheReleasedAtClose(t *testing.T) {
	if !kernel.HasFMA {
		t.Skip("no packed path on this CPU/architecture")
	}
	be := New(2)
	r := rand.New(rand.NewPCG(21, 22))
	const rows = 2 * fmaRows // two row blocks: packed from the first call (firstOfOneBlock)
	w, _ := testSuite.Weight("w", conformance.RandVals(r, 70*300, 0.1), dtype.F32, 0, 70, 300)
	y := conformance.Alloc(be, rows*70)
	be.MatMul(y, conformance.Upload(be, conformance.RandVals(r, rows*300, 1)), w, backend.Weight{}, rows, 300, 70)
	if be.packs[0].buf == nil && be.packs[1].buf == nil {
		t.Fatal("no weight was cached")
	}
	be.Close()
	be.Close()
	for i, e := range be.packs {
		if e.buf != nil || e.valid {
			t.Errorf("entry %d still holds %d floats after Close", i, len(e.buf))
		}
	}
	heap := make([]float32, 1<<20)
	hugeFree(heap, false)
	heap[len(heap)-1] = 1 // still ours
}

// TestPackTime: MatMul reports the time it spent packing a weight (TakePackTime) when it packs
// one, on every kernel that packs (FMA panels, AMX tiles), and none when the pass's cache
// already holds it; taking the time starts it again from zero.
func TestPackTime(t *testing.T) {
	const rows, in, out = 2 * fmaRows, 640, 96 // two row blocks: packed from the first call (firstOfOneBlock)
	r := rand.New(rand.NewPCG(17, 18))
	w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), dtype.BF16, 0, out, in)
	xv := conformance.RandVals(r, rows*in, 1)
	kernel.EachKernel(func(name string) {
		if name == "generic" {
			return // reads the weight in place: nothing packed
		}
		be := New(2)
		defer be.Close()
		x := conformance.Upload(be, xv)
		y := conformance.Alloc(be, rows*out)
		be.TakePackTime()
		be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
		if d := be.TakePackTime(); d <= 0 {
			t.Errorf("%s: the first call packed the weight in %v", name, d)
		}
		if d := be.TakePackTime(); d != 0 {
			t.Errorf("%s: a second take without a call gave %v", name, d)
		}
		be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
		if d := be.TakePackTime(); d != 0 {
			t.Errorf("%s: the cached weight was packed again (%v)", name, d)
		}
		be.Commit()
		be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
		if d := be.TakePackTime(); d <= 0 {
			t.Errorf("%s: after Commit the weight was not packed again (%v)", name, d)
		}
	})
}

// TestOneBlockCallWidensPerTaskFirst: the first call of a pass that takes a weight in one row
// block widens it per task and packs nothing (each panel is read by one task); the pass's
// second call packs it, the third reads the pack, all with the same bits; Commit starts over.
// A call of two row blocks packs at once.
func TestOneBlockCallWidensPerTaskFirst(t *testing.T) {
	if !kernel.HasFMA {
		t.Skip("no packed path on this CPU/architecture")
	}
	const in, out = 300, 70
	r := rand.New(rand.NewPCG(23, 24))
	w, _ := testSuite.Weight("w", conformance.RandVals(r, out*in, 0.1), dtype.F32, 0, out, in) // F32: never the AMX path
	xv := conformance.RandVals(r, 2*fmaRows*in, 1)
	kernel.EachKernel(func(name string) {
		if name == "generic" {
			return // reads the weight in place: nothing packed
		}
		be := New(2)
		defer be.Close()
		call := func(rows int) ([]float32, time.Duration) {
			x, y := conformance.Upload(be, xv[:rows*in]), conformance.Alloc(be, rows*out)
			be.TakePackTime()
			be.MatMul(y, x, w, backend.Weight{}, rows, in, out)
			return conformance.Download(be, y, rows*out), be.TakePackTime()
		}
		want := []string{"first: per task", "second: packs", "third: the pack"}
		var first []float32
		for k, which := range want {
			y, d := call(20)
			if packed := d > 0; packed != (k == 1) {
				t.Errorf("%s: the pass's %s call packed %v (%v)", name, which, packed, d)
			}
			if k == 0 {
				first = y
			} else if i, ok := sameBits(first, y); !ok {
				t.Errorf("%s: the %s call differs from the first at element %d", name, which, i)
			}
		}
		be.Commit()
		if _, d := call(20); d != 0 {
			t.Errorf("%s: after Commit the first call packed (%v)", name, d)
		}
		be.Commit()
		if _, d := call(2 * fmaRows); d <= 0 {
			t.Errorf("%s: a first call of two row blocks packed nothing", name)
		}
	})
}
