// matmul_fma.go: the packed MatMul path that drives the AVX2+FMA micro-kernel (amd64 only).
//
// Invariant: each y[r,o] is ONE float32 chain acc = fma(x[r,i], W[o,i], acc) for i = 0..in-1
// in order, from +0, carried through y (exactly: a float32 store and load) between k-blocks,
// then + bias[o] exactly once. The chain depends only on x row r, W row o and in, so the bits
// do not depend on rows, on the row's slot in a 6-row tile (short tiles repeat their last row
// and drop the copy), on the output's lane in a 16-wide strip (short strips compute zero-padded
// lanes into a side buffer and drop them), on the thread count or on the task partition.
// The k-block split (fmaDepth) cannot change the bits either, since the carry is exact.
// Numerics: FMA here, one rounding per step; the generic path (matmul.go, kernel.Dot3x2) rounds
// twice (product, then sum). The two paths differ in the last bits, never within one path;
// kernel.UseFMA is fixed at start-up, so one process only ever uses one of them.
// Mutation that would silently break it: falling back to the generic kernel for the rows or
// columns left over by the tiling (e.g. a 1-row remainder through kernel.Dot3x2): the engine's
// row tiles would then see a row computed by either path depending on the tile size.
package cpu

import (
	"math"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"

	"github.com/turbospark/inspector/engine/internal/kernel"
)

// Blocking of the FMA path (measured with BenchmarkMatMul on a 2-core Zen 3, sweeping the three
// numbers: 384/64/512, 384/128/256, 384/128/512, 192/64/512, 384/32/1024, 384/256/256,
// 516/64/768, 516/128/512, 342/64/1024 were all 5-25% slower or noisier than 516/64/1024):
// a task is a block of rows times a panel of fmaCols W rows. Per k-block of fmaDepth the task
// widens its W panel into k-major strips (fmaCols x fmaDepth float32, 256 KiB, L2) once, then
// runs each 6-row x tile (6 x fmaDepth float32, 24 KiB, L1) against every strip. Each row
// block widens W again (unless W is packed for the pass), so a call has as few row blocks as
// keep the threads busy (rowBlock), never more than rows/fmaRows, and none longer than
// fmaMaxRows: a task's x rows (fmaMaxRows x fmaDepth float32, 4 MiB) then stay in L3 across
// its panels. Measured on the Zen 5 machines
// with BenchmarkMatMulKernels at 5,120 rows, alternating runs: uncapped (one 5,120-row block)
// 255-330 GFLOP/s, capped at 1,032 rows 323-354, at 2,064 rows 313-366.
const (
	fmaRows    = 516  // a row block's least size when the call is cut (multiple of 6)
	fmaMaxRows = 1032 // a row block's most (multiple of 6)
	fmaCols    = 64   // multiple of 16, the kernel's lane count
	fmaDepth   = 1024 // k-block; depends on nothing but in (and cannot change the bits anyway)
	fmaMR      = 6
	fmaNR      = 16 // FMA6x16's lanes; FMA6x32 (AVX-512) takes strips of 2*fmaNR
)

// microKernel is the packed paths' choice of kernel, made from kernel.UseAVX512 (fixed at
// start-up) per call: FMA6x32 on 32-wide strips or FMA6x16 on 16-wide ones. Both run the same
// per-lane chain, so the choice changes speed, never bits. (A direct call, not a func value:
// through a func value the x and y pointer arrays escape, one heap allocation per call, 20%
// of a block's time at 1,024 patches.)
type microKernel struct {
	nr int // lanes per strip: 16 or 32
}

func pickKernel() microKernel {
	if kernel.UseAVX512 {
		return microKernel{2 * fmaNR}
	}
	return microKernel{fmaNR}
}

func (mk microKernel) run(x *[6]unsafe.Pointer, w unsafe.Pointer, n int, y *[6]unsafe.Pointer, carry int) {
	if mk.nr == 2*fmaNR {
		kernel.FMA6x32(x, w, n, y, carry)
	} else {
		kernel.FMA6x16(x, w, n, y, carry)
	}
}

// fmaScratch is the per-worker scratch the FMA path needs for an in-wide MatMul.
func fmaScratch(in int) int {
	kn := min(in, fmaDepth)
	return fmaCols*kn + kn + fmaMR*2*fmaNR
}

// rowBlock is the rows of one FMA task: all of them unless fewer than 8 tasks per thread
// would remain (then as many blocks as give 8, at least fmaRows rows each) or the block would
// pass fmaMaxRows, a multiple of 6. When W is packed for the pass (packed: packcache.go) a row
// block costs no widening, and the call is cut finer where its panels alone would leave
// threads idle (balancedBlocks). The cut never changes the bits (a row's lanes depend on its x
// row alone).
func rowBlock(rows, panels, threads int, packed bool) int {
	blocks := min(chunks(8*threads, panels), max(1, rows/fmaRows))
	blocks = max(blocks, chunks(rows, fmaMaxRows))
	if packed {
		blocks = balancedBlocks(blocks, rows, panels, threads)
	}
	return chunks(chunks(rows, blocks), fmaMR) * fmaMR
}

// packedRows is a row block's least size when W is packed for the pass: 16 of the kernel's
// 6-row tiles, ~14 MFLOP a task at in 1,152 and 64 columns.
const packedRows = 96

// balancedBlocks is the fewest row blocks, from blocks on and of at least packedRows rows,
// whose tasks (blocks x panels) fill the threads' last round to 90%, else the fullest. At
// 1,024 rows on 16 threads, proj's and fc2's 18 panels made 18 tasks: two rounds, the second
// with 2 of 16 threads busy (56%); 4 row blocks make 72 tasks in 5 rounds (90%). With 2
// threads every call here already fills its rounds, and nothing changes.
func balancedBlocks(blocks, rows, panels, threads int) int {
	best, bestFill := blocks, 0.0
	for b := blocks; b == blocks || b <= rows/packedRows; b++ {
		tasks := b * panels
		fill := float64(tasks) / float64(chunks(tasks, threads)*threads)
		if fill >= 0.9 {
			return b
		}
		if fill > bestFill {
			best, bestFill = b, fill
		}
	}
	return best
}

// taskFMA computes the block of y named by t (row block t/panels, column panel t%panels).
// The bias is added to each 6-row tile right after its last k-block, while it is in L1.
func (m *mmJob) taskFMA(ws []float32, t int) {
	r0 := t / m.panels * m.rowsPer
	r1 := min(r0+m.rowsPer, m.rows)
	c0 := t % m.panels * fmaCols
	c1 := min(c0+fmaCols, m.out)
	mk := m.kern
	strips := chunks(c1-c0, mk.nr)
	tmp := ws[len(ws)-fmaMR*mk.nr:]
	for k0 := 0; k0 < m.in; k0 += fmaDepth {
		kn := min(fmaDepth, m.in-k0)
		var panel []float32
		if m.packed != nil { // widened once for the pass
			panel = m.packed[packedOffset(t%m.panels, k0, m.in):][:strips*mk.nr*kn]
		} else {
			panel = ws[:strips*mk.nr*kn]
			packPanel(panel, ws[fmaCols*kn:fmaCols*kn+kn], mk.nr, m, c0, c1, k0)
		}
		carry := 0
		if k0 > 0 {
			carry = 1
		}
		for r := r0; r < r1; r += fmaMR {
			nr := min(fmaMR, r1-r)
			var xp [fmaMR]unsafe.Pointer
			for a := range fmaMR {
				xp[a] = rowPtr(m.x, (r+min(a, nr-1))*m.in+k0, kn)
			}
			for s := range strips {
				wp := rowPtr(panel, s*mk.nr*kn, mk.nr*kn)
				c := c0 + s*mk.nr
				if nc := min(mk.nr, c1-c); nc < mk.nr {
					m.shortStrip(&xp, wp, kn, tmp, r, nr, c, nc, carry)
					continue
				}
				var yp [fmaMR]unsafe.Pointer
				for a := range fmaMR {
					yp[a] = rowPtr(m.y, (r+min(a, nr-1))*m.out+c, mk.nr)
				}
				mk.run(&xp, wp, kn, &yp, carry)
			}
			if k0+kn == m.in {
				if m.bias != nil {
					m.addBias(r, r+nr, c0, c1)
				}
				m.epilogue(r, r+nr, c0, c1)
			}
		}
	}
}

// shortStrip runs the kernel on a strip of nc < nr outputs through tmp (6 x nr lanes): the
// valid lanes carry y in and out, the padded lanes (W = 0) are computed and dropped.
func (m *mmJob) shortStrip(xp *[fmaMR]unsafe.Pointer, wp unsafe.Pointer, kn int, tmp []float32, r, nr, c, nc, carry int) {
	w := m.kern.nr
	var yp [fmaMR]unsafe.Pointer
	for a := range fmaMR {
		yp[a] = rowPtr(tmp, min(a, nr-1)*w, w)
	}
	if carry != 0 {
		for a := range nr {
			copy(tmp[a*w:a*w+nc], m.y[(r+a)*m.out+c:])
		}
	}
	m.kern.run(xp, wp, kn, &yp, carry)
	for a := range nr {
		copy(m.y[(r+a)*m.out+c:(r+a)*m.out+c+nc], tmp[a*w:])
	}
}

// packPanel widens W rows [c0, c1), columns [k0, k0+kn) into p, k-major in strips of nr W
// rows: p[s*nr*kn + k*nr + j] = W[c0+nr*s+j, k0+k], and 0 for the padded rows c0+nr*s+j >= c1.
// row is kn floats of scratch.
func packPanel(p, row []float32, nr int, m *mmJob, c0, c1, k0 int) {
	kn := len(row)
	for s := range len(p) / (nr * kn) {
		cs := c0 + s*nr
		strip := p[s*nr*kn : (s+1)*nr*kn]
		if !packStripFast(strip, nr, m.w, m.in, cs, min(nr, c1-cs), k0, kn) {
			packStrip(strip, row, nr, m, cs, c1, k0)
		}
	}
}

// packStrip is packPanel for one strip through a decoded row: any dtype, any alignment.
func packStrip(strip, row []float32, nr int, m *mmJob, cs, c1, k0 int) {
	kn := len(row)
	for j := range nr {
		dst := strip[j : j+nr*(kn-1)+1]
		if cs+j >= c1 {
			for k := range kn {
				dst[nr*k] = 0
			}
			continue
		}
		decodeWeight(row, m.w, (cs+j)*m.in+k0)
		for k, v := range row {
			dst[nr*k] = v
		}
	}
}

// packStripFast is packStrip for aligned little-endian F32, BF16 and F16 weights (what
// checkpoints hold), k outer and the strip's rows inner: the stores run contiguously and the nv source
// rows stay in L1 across consecutive k; full 32-row strips on AVX-512 go through
// kernel.PackBF16x32 / PackF16x32 (16 x 16 register transposes, widening each column) and, for F32,
// kernel.Transpose itself. Same values as packStrip (widening is exact);
// false when it cannot take the weight. packStrip's stores stride through L2 (23% of a block
// at 1,024 patches); the k-outer loop takes 0.65 ns per element (still ~10% of a GEMM call),
// the transposes 0.08-0.13 ns on AMD Zen 5, where gathers took 0.26-0.31 (BenchmarkPackPanel).
func packStripFast(strip []float32, nr int, w backend.Weight, in, cs, nv, k0, kn int) bool {
	size := w.DType.Size()
	if !littleEndian || nv <= 0 || (w.DType != dtype.BF16 && w.DType != dtype.F32 && w.DType != dtype.F16) {
		return false
	}
	first := w.Offset + (cs*in+k0)*size
	last := w.Offset + ((cs+nv-1)*in+k0+kn)*size // one past the last byte read
	if first < 0 || last > len(w.Region.Bytes) || len(strip) < nr*kn {
		return false
	}
	base := unsafe.Pointer(&w.Region.Bytes[first])
	if uintptr(base)%uintptr(size) != 0 {
		return false
	}
	rowBytes := uintptr(in * size)
	dst := unsafe.Pointer(&strip[0])
	k0v := 0 // k from which the scalar loop below goes on
	if kernel.UseAVX512 && nr == 2*fmaNR && nv == nr && int64(rowBytes)*int64(nr) < 1<<31 {
		switch w.DType { // AVX-512 transposes; BF16 and F16 a pair of k per 32-bit element
		case dtype.BF16:
			kernel.PackBF16x32(&strip[0], base, int(rowBytes), kn/2)
			k0v = kn / 2 * 2
		case dtype.F16:
			kernel.PackF16x32(&strip[0], base, int(rowBytes), kn/2)
			k0v = kn / 2 * 2
		default:
			kernel.Transpose(dst, 2*fmaNR, base, int(rowBytes)/4, nr, kn) // F32: the panel is the rows' transpose
			k0v = kn
		}
	}
	for k := k0v; k < kn; k++ {
		d := (*[2 * fmaNR]float32)(unsafe.Add(dst, k*nr*4))[:nr:nr]
		src := unsafe.Add(base, k*size)
		switch w.DType {
		case dtype.BF16:
			for j := range nv {
				d[j] = math.Float32frombits(uint32(*(*uint16)(unsafe.Add(src, uintptr(j)*rowBytes))) << 16)
			}
		case dtype.F16:
			for j := range nv {
				d[j] = halfToFloat(*(*uint16)(unsafe.Add(src, uintptr(j)*rowBytes)))
			}
		default:
			for j := range nv {
				d[j] = *(*float32)(unsafe.Add(src, uintptr(j)*rowBytes))
			}
		}
		clear(d[nv:])
	}
	return true
}
