// matmul_amx.go: MatMul with BF16 weights on the AMX tile unit (kernel.UseAMX, fixed at
// start-up; Intel Sapphire Rapids and later, Linux 5.16+).
//
// A call splits x into its three bfloat16 pieces (kernel.SplitBF16x3: exact), packs W into
// AMX's VNNI tiles once per pass (the pack cache, as the FMA path's panels), and computes y in
// blocks of 32 rows x 32 columns, one kernel.AMXDot32x32 call per block and k-block of
// amxDepth chunks (the sums carried through y between them); the bias and the epilogue
// follow on the block after its last k-block, while it is in cache.
//
// Invariant: each y[r,o] is kernel.AMXDot32x32's accumulator for x row r and W row o over all
// of in, in chunk order (k padded to a multiple of 32 with zeros, which add nothing; carried
// exactly through y between k-blocks), then + bias[o] once. It depends on x row r, W row o
// and in alone: not on the rows, the row's place in a block (a short block is padded with
// zero rows and its outputs dropped), the column's place, the thread count or the split of
// the call into row chunks. The path is chosen by the weight's
// dtype (BF16) and kernel.UseAMX alone, never by a shape: a row computes the same bits in an
// MLP tile of 1 row or of 5,120.
// Numerics: a float32 dot product whose error measured a third of the FMA chain's (see
// engine/internal/kernel/amx_amd64.go); the bits differ from the FMA path's, as the FMA path's
// differ from the generic one's, never within one path.
// Mutation that would silently break it: not zeroing the padding of a short last k chunk
// (its copy lives in worker scratch, which holds an earlier call's longer tail): a padded k
// then adds stale x times a zero weight, NaN when the stale x was NaN or Inf
// (TestAMXMatMulPadding).
package cpu

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/turbospark/inspector/engine/internal/kernel"
)

const (
	amxBlock     = 32                  // rows and columns of one kernel call (four 16 x 16 tiles)
	amxK         = 32                  // k per chunk: one tile row of bfloat16
	amxChunk     = 3072                // uint16 per row block and chunk: 3 pieces x 2 row tiles x 512
	amxVNNI      = 512                 // uint16 per 16-column tile and chunk
	amxChunkRows = kernel.AMXSplitRows // rows split at a time
	// amxDepth is the chunks of one kernel call (k 1,152): a row block's pieces for them
	// (216 KiB) stay in L2 while the weight's tiles stream past. Without it fc2 (in 4,304:
	// 830 KiB of pieces a row block) ran at 250-340 GFLOP/s on 2 threads of the 16-core
	// device where the other GEMMs ran at 260-570. The cut never changes a bit: a call
	// carries the last one's float32 sums exactly.
	amxDepth = 36
)

// columnGroup is how many 32-column blocks one task takes: as many as still leave every thread
// amxTasksPerThread tasks per row chunk. A loop ends when its slowest thread does, and the
// tile unit's rate differs from core to core and moment to moment: with 4 tasks a thread the
// products' loop stood 22% idle at 16 threads and 5,120 patches (the sum over threads of the
// wall less the tasks' time), with 16 7%. Measured on the 16-core device (8B tower, bench
// --one, five interleaved rounds, against 4 tasks a thread and a split loop of its own): the
// block 0.893 (0.851-1.008) at 16 x 5,120, 0.972 (0.931-1.041) at 16 x 1,024, 0.957
// (0.867-1.008) at 8 x 5,120; 8 tasks a thread 0.957, 0.966, 0.991. At 2 threads every GEMM of
// the tower is one group (a task is a row block, all its columns). The grouping never changes
// a bit.
func columnGroup(nbs, mbs, threads int) int { return max(1, nbs*mbs/(amxTasksPerThread*threads)) }

const amxTasksPerThread = 16

// matMulAMX computes job (BF16 weights) on the tile unit: per chunk of amxChunkRows rows, one
// loop whose tasks are (column group, row block), group-major, each splitting its row block's
// x rows into pieces first unless another task has: a sync.Once per row block, whose Do
// returns only after the one split has (a task never reads pieces still being written; a
// split that panics counts as done, and the loop re-raises the panic). The wait is only ever
// on a running split, which neither stops nor blocks, and group-major order puts every row
// block's first task before any second, so waits are rare. There is no loop of its own for
// the split: at 16 threads that loop (32 row blocks, two tasks a thread) stood half idle, 11
// ms of a 0.19 s block at 5,120 patches, with its own barrier before the products'.
func (b *Backend) matMulAMX(job *mmJob) {
	kc := chunks(job.in, amxK)
	nbs := chunks(job.out, amxBlock)
	w := b.vnniWeight(job, kc, nbs)
	if w == nil { // cancelled while packing
		return
	}
	rows := min(job.rows, amxChunkRows)
	mbs := chunks(rows, amxBlock)
	split := b.amxSplitBuffer(mbs * kc * amxChunk)
	b.growScratch(amxBlock*amxBlock + amxK)
	for r0 := 0; r0 < job.rows && b.ctx.Err() == nil; r0 += amxChunkRows {
		n := min(amxChunkRows, job.rows-r0)
		mbs := chunks(n, amxBlock)
		group := columnGroup(nbs, mbs, b.threads)
		groups := chunks(nbs, group)
		splits := make([]sync.Once, mbs)
		b.parallel(mbs*groups, func(wk, t int) {
			g, mb := t/mbs, t%mbs
			a := split[mb*kc*amxChunk : (mb+1)*kc*amxChunk]
			r, r1 := r0+mb*amxBlock, min(r0+n, r0+(mb+1)*amxBlock)
			splits[mb].Do(func() { job.splitRows(a, r, r0+n, kc, b.scratch[wk]) })
			nb0, nb1 := g*group, min(nbs, (g+1)*group)
			for k0 := 0; k0 < kc; k0 += amxDepth {
				for nb := nb0; nb < nb1; nb++ {
					job.blockAMX(a, w, r, r1, nb, k0, min(amxDepth, kc-k0), kc, b.scratch[wk])
				}
			}
		})
	}
}

// splitRows writes the pieces of x rows [r, r+32) into a (one row block, kc chunks): rows
// from end on, and k from in on, as zeros.
func (m *mmJob) splitRows(a []uint16, r, end, kc int, ws []float32) {
	full := m.in / amxK
	for i := range amxBlock {
		dst := a[i/16*amxVNNI+i%16*amxK:]
		if r+i >= end {
			for c := range kc {
				for p := range 3 {
					clear(dst[c*amxChunk+p*2*amxVNNI:][:amxK])
				}
			}
			continue
		}
		x := m.x[(r+i)*m.in:][:m.in]
		if full > 0 {
			kernel.SplitBF16x3(&dst[0], &x[0], full)
		}
		if full < kc { // the last, short chunk through a zero-padded copy
			tail := ws[amxBlock*amxBlock:][:amxK]
			clear(tail[copy(tail, x[full*amxK:]):])
			kernel.SplitBF16x3(&dst[full*amxChunk], &tail[0], 1)
		}
	}
}

// blockAMX advances y rows [r, r1) (r1-r <= 32) in the columns of block nb by the kn chunks
// from k0 of the row block's pieces a and the packed weight w (carrying y's sums when k0 > 0);
// after the last chunk it adds the bias and applies the epilogue.
func (m *mmJob) blockAMX(a, w []uint16, r, r1, nb, k0, kn, kc int, ws []float32) {
	c0 := nb * amxBlock
	c1 := min(c0+amxBlock, m.out)
	xa := &a[k0*amxChunk]
	b0 := &w[(2*nb*kc+k0)*amxVNNI]
	b1 := &w[((2*nb+1)*kc+k0)*amxVNNI]
	carry := 0
	if k0 > 0 {
		carry = 1
	}
	if r1-r == amxBlock && c1-c0 == amxBlock {
		kernel.AMXDot32x32(xa, b0, b1, kn, &m.y[r*m.out+c0], 4*m.out, carry, &kernel.AMXTileConfig)
	} else { // a short block through scratch: only its valid part is read from y and reaches it
		tmp := ws[:amxBlock*amxBlock]
		if carry != 0 {
			clear(tmp)
			for i := range r1 - r {
				copy(tmp[i*amxBlock:], m.y[(r+i)*m.out+c0:(r+i)*m.out+c1])
			}
		}
		kernel.AMXDot32x32(xa, b0, b1, kn, &tmp[0], 4*amxBlock, carry, &kernel.AMXTileConfig)
		for i := range r1 - r {
			copy(m.y[(r+i)*m.out+c0:(r+i)*m.out+c1], tmp[i*amxBlock:])
		}
	}
	if k0+kn < kc {
		return
	}
	if m.bias != nil {
		m.addBias(r, r1, c0, c1)
	}
	m.epilogue(r, r1, c0, c1)
}

// vnniWeight returns job's BF16 weight in AMX's VNNI tiles: 16-column tile t (W rows 16t..)
// at t*kc*512, chunk c at +c*512, row p of a chunk holding W[16t+j, 32c+2p+e] at 2j+e; W rows
// from out on, and k from in on, are zeros. From the pack cache, or packed now (parallel over
// tiles); nil when cancelled.
func (b *Backend) vnniWeight(job *mmJob, kc, nbs int) []uint16 {
	n16 := 2 * nbs * kc * amxVNNI
	fill := func(buf []float32) {
		b.packVNNITiles(job, unsafe.Slice((*uint16)(unsafe.Pointer(&buf[0])), n16), kc, nbs)
	}
	key := packKey{job.w.Region.ID, job.w.Offset, job.w.Name, job.w.DType, -amxBlock, job.in, job.out}
	buf := b.cachedPack(key, n16/2, fill)
	if buf == nil && b.ctx.Err() == nil { // too large to keep (a merger): this call's own
		if cap(b.amxWeight) < n16/2 {
			b.amxWeight = make([]float32, n16/2)
		}
		buf = b.amxWeight[:n16/2]
		b.timePack(fill, buf)
	}
	if buf == nil || b.ctx.Err() != nil {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&buf[0])), n16)
}

// packVNNITiles writes all 2*nbs 16-column tiles of job's weight into dst (kc chunks each),
// in parallel over tiles.
func (b *Backend) packVNNITiles(job *mmJob, dst []uint16, kc, nbs int) {
	b.parallel(2*nbs, func(_, t int) {
		job.packVNNI(dst[t*kc*amxVNNI:(t+1)*kc*amxVNNI], 16*t, kc)
	})
}

// packVNNI writes one 16-column tile's chunks (W rows [o0, o0+16)) into dst. With 16 whole
// rows and an even in, tile row p (k pair p) is element p of each of the 16 rows, a pair of
// bfloat16 read as one 32-bit element: a transpose of the rows' pairs (kernel.Transpose, the
// bits moved); the rest (a short tile, an odd in, the padding past in) element by element.
func (m *mmJob) packVNNI(dst []uint16, o0, kc int) {
	raw := m.w.Region.Bytes
	rowBytes := 2 * m.in
	first := m.w.Offset + o0*rowBytes
	pairs := 0 // k pairs written by the transpose
	if littleEndian && m.in%2 == 0 && o0+16 <= m.out && first >= 0 && first+16*rowBytes <= len(raw) {
		pairs = m.in / 2
		if pairs > 0 {
			kernel.Transpose(unsafe.Pointer(&dst[0]), 16, unsafe.Pointer(&raw[first]), pairs, 16, pairs)
		}
	}
	for p := pairs; p < kc*amxK/2; p++ { // the rest: odd k, padding, rows past out
		row := dst[p*2*16:][:2*16]
		for j := range 16 {
			for e := range 2 {
				o, k := o0+j, 2*p+e
				row[2*j+e] = 0
				if o < m.out && k < m.in {
					row[2*j+e] = binary.LittleEndian.Uint16(raw[m.w.Offset+(o*m.in+k)*2:])
				}
			}
		}
	}
}

// amxSplitBuffer returns the backend's split buffer with n elements.
func (b *Backend) amxSplitBuffer(n int) []uint16 {
	if cap(b.amxSplit) < n {
		b.amxSplit = make([]uint16, n)
	}
	return b.amxSplit[:n]
}
