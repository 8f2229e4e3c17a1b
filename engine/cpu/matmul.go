// matmul.go: y[r,o] = sum_i x[r,i]*W[o,i] + bias[o], W in PyTorch [out,in] layout, any float dtype.
//
// Invariant: each y[r,o] is the in-order float32 sum of x[r,i]*W[o,i] (one accumulator, carried
// through y between k-blocks), then + bias[o] exactly once, after the last k-block.
// Mutation that would silently break it: adding the bias inside the k-block loop (bias counted
// in/kc times) or initializing the accumulators of a later k-block from zero instead of y;
// both keep every shape and give plausible numbers on a single k-block test, hence the parity
// test uses in > kc.
// Two paths: where the CPU has AVX2+FMA (kernel.UseFMA, fixed at start-up) MatMul takes the packed
// path of matmul_fma.go (one FMA rounding per step); otherwise the generic kernel.Dot3x2 path below
// (product and sum rounded separately). The paths differ in the last bits, never within one.
// Mutation that would silently break it: choosing the path per call (by rows or by shape that
// includes rows): the engine's row tiles would then mix the two roundings.
package cpu

import (
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// Blocking of MatMul (measured on a 2-core Zen 3 with BenchmarkMatMul and a sweep of these
// three numbers): a task is a block of mmRows x rows times a panel of mmCols W rows. Per
// k-block of mmDepth, the task widens its W panel (mmCols x mmDepth float32, 256 KiB, L2) once,
// then streams x rows three at a time against it, two W rows per micro-kernel call.
// Scalar code needs only ~6 bytes per cycle, so cache blocking matters little here; what
// pays is few, long kernel calls: k-blocks of 256 were 10% slower than 2048, and 2048 was
// as fast as no k-blocking at in = 4304. Row blocks bound how often W is re-widened (once
// per 192 rows) while keeping enough tasks for every core.
const (
	mmRows  = 192  // multiple of 3, the micro-kernel's row count
	mmCols  = 32   // multiple of 2, the micro-kernel's column count
	mmDepth = 2048 // k-block; the merger's in = 4608 crosses it, and so do the parity tests
)

// MatMul computes y = x W^T + bias for rows rows. A zero bias Weight (nil Region) means none.
// y must not overlap x.
func (b *Backend) MatMul(y, x backend.View, w backend.Weight, bias backend.Weight, rows, in, out int) {
	b.MatMulEpilogue(y, x, w, bias, rows, in, out, backend.Epilogue{})
}

// MatMulEpilogue is MatMul followed by ep (backend.Epilogue), applied by each task to its
// block of y right after the bias, while the block is in cache.
func (b *Backend) MatMulEpilogue(y, x backend.View, w backend.Weight, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rows < 0 || in <= 0 || out <= 0 {
		panic(fmt.Sprintf("cpu: MatMul: bad shape rows %d in %d out %d", rows, in, out))
	}
	checkWeight("MatMul", w, out*in)
	xs := span(x, rows*in, "MatMul x")
	ys := span(y, rows*out, "MatMul y")
	noOverlap("MatMul", y, rows*out, x, rows*in)
	if rows == 0 {
		return
	}
	var bs []float32
	if hasWeight(bias) {
		checkWeight("MatMul bias", bias, out)
		bs = b.sharedScratch(out)
		decodeWeight(bs, bias, 0)
	}
	job := mmJob{x: xs, y: ys, w: w, bias: bs, rows: rows, in: in, out: out}
	if ep.GELU {
		job.gelu = geluRows(ep.Form)
	}
	if ep.Residual.Buf != nil {
		job.res = span(ep.Residual, rows*out, "MatMul residual")
		noOverlap("MatMul residual", ep.Residual, rows*out, y, rows*out)
		noOverlap("MatMul residual", ep.Residual, rows*out, x, rows*in)
	}
	if kernel.UseAMX && w.DType == dtype.BF16 { // fixed at start-up, and by the weight's dtype alone
		b.matMulAMX(&job)
		return
	}
	if kernel.UseFMA { // fixed at start-up: every call of the process takes the same path
		job.panels = chunks(out, fmaCols)
		job.kern = pickKernel()
		job.packed = b.packedWeight(&job)
		job.rowsPer = rowBlock(rows, job.panels, b.threads, job.packed != nil)
		job.rowBlocks = chunks(rows, job.rowsPer)
		n := fmaScratch(in)
		b.growScratch(n)
		b.parallel(job.rowBlocks*job.panels, func(wk, t int) {
			job.taskFMA(b.scratch[wk][:n], t)
		})
		return
	}
	job.rowBlocks = chunks(rows, mmRows)
	job.panels = chunks(out, mmCols)
	b.growScratch(mmCols * min(in, mmDepth))
	b.parallel(job.rowBlocks*job.panels, func(wk, t int) {
		job.task(b.scratch[wk], t)
	})
}

type mmJob struct {
	x, y, bias        []float32
	w                 backend.Weight
	rows, in, out     int
	rowBlocks, panels int
	rowsPer           int             // rows per row block of the packed path (rowBlock)
	packed            []float32       // W widened into panels for this pass (packcache.go), or nil
	gelu              func([]float32) // the epilogue's GELU, or nil
	res               []float32       // the epilogue's residual [rows, out], or nil
	kern              microKernel     // the packed path's kernel (matmul_fma.go)
}

// task computes the block of y named by t: row block t/panels, column panel t%panels.
func (m *mmJob) task(ws []float32, t int) {
	r0 := t / m.panels * mmRows
	r1 := min(r0+mmRows, m.rows)
	c0 := t % m.panels * mmCols
	c1 := min(c0+mmCols, m.out)
	for k0 := 0; k0 < m.in; k0 += mmDepth {
		kn := min(mmDepth, m.in-k0)
		panel := ws[:(c1-c0)*kn]
		for c := c0; c < c1; c++ {
			decodeWeight(panel[(c-c0)*kn:(c-c0+1)*kn], m.w, c*m.in+k0)
		}
		for r := r0; r < r1; r += 3 {
			m.rowTriple(panel, r, r1, c0, c1, k0, kn)
		}
	}
	if m.bias != nil {
		m.addBias(r0, r1, c0, c1)
	}
	m.epilogue(r0, r1, c0, c1)
}

// epilogue applies the GELU, then adds into the residual, for rows [r0, r1) and columns
// [c0, c1) of y, after the bias (backend.Epilogue).
func (m *mmJob) epilogue(r0, r1, c0, c1 int) {
	if m.gelu != nil {
		for r := r0; r < r1; r++ {
			m.gelu(m.y[r*m.out+c0 : r*m.out+c1])
		}
	}
	if m.res != nil {
		addRows(m.res[r0*m.out+c0:], m.out, m.y[r0*m.out+c0:], m.out, r1-r0, c1-c0)
	}
}

// rowTriple advances rows r..r+2 (clipped to r1) over columns [c0, c1) by one k-block.
// A missing row or column reuses a valid pointer and its result is dropped.
func (m *mmJob) rowTriple(panel []float32, r, r1, c0, c1, k0, kn int) {
	nr := min(3, r1-r)
	rowIdx := [3]int{r, r + min(1, nr-1), r + min(2, nr-1)}
	xa := rowPtr(m.x, rowIdx[0]*m.in+k0, kn)
	xb := rowPtr(m.x, rowIdx[1]*m.in+k0, kn)
	xc := rowPtr(m.x, rowIdx[2]*m.in+k0, kn)
	for c := c0; c < c1; c += 2 {
		nc := min(2, c1-c)
		wa := rowPtr(panel, (c-c0)*kn, kn)
		wb := rowPtr(panel, (c+nc-1-c0)*kn, kn)
		var acc [6]float32
		if k0 > 0 { // carry the running sums: same order as one uncut loop
			for a := range nr {
				for j := range nc {
					acc[2*a+j] = m.y[rowIdx[a]*m.out+c+j]
				}
			}
		}
		kernel.Dot3x2(xa, xb, xc, wa, wb, kn, &acc)
		for a := range nr {
			for j := range nc {
				m.y[rowIdx[a]*m.out+c+j] = acc[2*a+j]
			}
		}
	}
}

// addBias adds the bias once, after the full sum.
func (m *mmJob) addBias(r0, r1, c0, c1 int) {
	addRows(m.y[r0*m.out+c0:], m.out, m.bias[c0:c1], 0, r1-r0, c1-c0)
}
