// attention_flash.go: the AVX-512 Attention path: flash-style tiles with the queries in the
// lanes, through kernel.FMA6x32 and the column softmax of kernel.ColScaleMax / ColExpSum /
// ColScale (amd64 with AVX-512F only).
//
// Layout: a block of 32 queries is the kernel's 32 lanes. Q.K^T runs as S^T = K Q^T: the x
// rows are 6 keys (of K copied row after row per (keys, head): packK), W is the block's Q^T
// [hd][32], so a score tile is [keys][32 queries]; P.V runs as O^T = V^T P^T: the x rows are
// 6 dimensions of V^T, W is the score tile itself. No lane is padding at head dim 72 (the query-row layout wasted a quarter
// of P.V's lanes: 72 dimensions in 96), K is only copied (not transposed), and the softmax
// runs down the keys lane by lane, with no reduction across lanes. Copying K made the op
// +3-15% faster at 1,024 patches (BenchmarkAttention, 2 threads, five interleaved pairs on
// this 2-core machine; at 5,120, eight pairs: 0.89-1.14, no difference beyond the noise):
// in qkv the six rows of a call lie 3D floats apart, short streams the prefetcher misses.
//
// Invariant: as in attention.go, a query sees only its own segment's keys. Per query the keys
// are taken in tiles of flashKeys from the segment's start; for each tile the scores are
// s[i] = (fma chain over d of q[d]*k_i[d], from +0) * scale, the running max m and float64 sum l
// are updated online (o and l scaled by exp(m_old - m_new) when the max grows), p = exp(s - m),
// and o[d] runs one fma chain over the tile's keys carried from the previous tile; at the end
// o[d] / l in float64. Every one of these is one lane, so a query's bits depend only on its q
// row, its segment and flashKeys: not on its lane, the 6-key or 6-dimension grouping (short
// groups repeat their last row and write the same values twice), the task cut or the thread
// count. Memory per worker: V^T and K of one (segment, head), plus the task's Q^T and O^T
// blocks and one score tile: no seq x seq matrix. Where each (segment, head) is one task, a
// worker packs its pair's V^T and K in its own scratch; where pairs are cut into several tasks
// (an image's heads on many threads), the call runs in waves of at most `threads` pairs, each
// packed once into the scratch of the worker of its index and read there by all its tasks
// (flashWaves). Either way each pair is packed once a call (twice at most in the first case,
// when two workers take its tasks), and the packing never changes a bit.
// Numerics: differs from the AVX2 and generic paths in the last bits (online rescaling, the
// polynomial exp); each path is deterministic on its own, and all pass the same parity tests.
// Mutation that would silently break it: skipping the rescale of o when the max grows in a
// later tile (the sum l would then disagree with o): only rows whose max is not in their first
// tile change, so the parity tests use segments longer than flashKeys with the max anywhere.
package cpu

import (
	"math"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

const (
	// flashKeys is the key tile: 42 groups of the kernel's 6 rows. Its K rows (in place) and
	// V^T columns, 73 KiB each at hd 72, stay in L2 while the task's query blocks pass.
	flashKeys = 252
	flashQ    = 2 * fmaNR           // queries per block: FMA6x32's lanes
	flashQB   = attQueries / flashQ // query blocks per attQueries queries
)

// attFlashScratch is the per-worker scratch of the flash path for segments of at most L keys:
// one (segment, head)'s packed V^T and K (flashKVLen), then the worker's own Q^T and O^T
// blocks and score tile.
func attFlashScratch(L, hd int) int {
	return flashKVLen(L, hd) + 2*flashQB*hd*flashQ + flashKeys*flashQ
}

// flashKVLen is the floats of one (segment, head)'s V^T and K for segments of at most L keys.
func flashKVLen(L, hd int) int { return hd*vtStride(L) + L*hd }

// vtStride is the row stride of V^T for a segment of L keys: whole 64-byte lines, and 16 floats
// more so that it is never a multiple of 4 KiB (at L = 1,024 the six x rows of P.V would all
// fall in one L1 set).
func vtStride(L int) int { return chunks(L, 16)*16 + 16 }

// flashWorker is what one worker keeps between the tasks of one Attention call: which
// (keys, head) its packed V^T holds (the per-worker packing; unused in waves), and the kernel's row-pointer tables (kept here, not
// allocated per task: pointer slices made per task were 8% of the op in the allocator).
type flashWorker struct {
	keys                        backend.Segment
	head                        int
	valid                       bool
	scRows, oRows, kRows, vRows [][fmaMR]unsafe.Pointer
}

// rows returns the worker's table buf with n entries.
func rows(buf *[][fmaMR]unsafe.Pointer, n int) [][fmaMR]unsafe.Pointer {
	if cap(*buf) < n {
		*buf = make([][fmaMR]unsafe.Pointer, n)
	}
	return (*buf)[:n]
}

// flashTaskFLOPs bounds one flash task's work (about 80 ms on one core): a cancelled run stops
// at the next task, well within a second, whatever the page.
const flashTaskFLOPs = 1e10

// flashTailFLOPs bounds a task's work where a (segment, head) is cut across threads anyway (more
// threads than the heads keep busy): the loop ends when its slowest thread does, and with the 4
// tasks a thread that the cut asks for, one late task kept the other threads waiting for up to a
// quarter of the op. At 5,120 patches (16 heads) it cuts each head into 27 tasks instead of 4
// (16 threads) or 2 (8). Measured on the 16-core device (8B tower, bench --one, six
// interleaved rounds, the bound against none): the attention op 0.873 (0.822-0.925, 6 of 6
// under 1) at 16 threads and 0.856 (0.826-1.031) at 8; at 1,024 patches the cut is unchanged
// (its tasks are under the bound). Where the heads alone give every thread 4 tasks (2 threads)
// a head stays one task, packed once. The cut never changes a bit.
const flashTailFLOPs = 3e8

// flashTasks cuts each (segment, head) into as few query ranges as leave 4 tasks per thread,
// each within flashTaskFLOPs (flashTailFLOPs where a head is cut anyway) and a whole number of
// attQueries blocks: a worker packs a head's K and V once per range it takes, so on 2 threads
// with 16 heads each head is packed once (not once per worker, as with one task per query
// block). The cut never changes the bits.
func flashTasks(segs []backend.Segment, heads, hd, threads int) []attTask {
	perHead := max(1, chunks(4*threads, len(segs)*heads))
	var tasks []attTask
	for _, sg := range segs {
		for h := range heads {
			tasks = append(tasks, cutPair(sg, h, perHead, hd)...)
		}
	}
	return tasks
}

// cutPair cuts the queries of segment sg, head h into about perHead ranges of whole attQueries
// blocks, each within flashTaskFLOPs, and within flashTailFLOPs when perHead > 1 (none when sg
// has no query).
func cutPair(sg backend.Segment, h, perHead, hd int) []attTask {
	Lq, Lk := sg.Len(), sg.Keys().Len()
	if Lq == 0 {
		return nil
	}
	bound := flashTaskFLOPs
	if perHead > 1 {
		bound = flashTailFLOPs
	}
	most := max(attQueries, int(bound/(4*float64(Lk)*float64(hd)))/attQueries*attQueries)
	per := min(most, chunks(chunks(Lq, perHead), attQueries)*attQueries)
	var tasks []attTask
	for q0 := sg.Start; q0 < sg.End; q0 += per {
		tasks = append(tasks, attTask{seg: sg, head: h, q0: q0, q1: min(q0+per, sg.End)})
	}
	return tasks
}

// flashWave is a group of at most `threads` (segment, head) pairs whose K and V^T are packed
// once each, pair p into worker p's scratch (its first flashKVLen floats), and then read by
// all of the pair's tasks, whichever worker runs them (task.slot names the pair's scratch).
type flashWave struct {
	pairs []attTask // one per pair: its segment and head
	tasks []attTask
}

// flashWaves plans a call whose pairs are fewer than 4 tasks a thread (an image's 16 heads on
// 8 or 16 threads: each head cut into several query ranges, each of which packed the head's K
// and V^T again on the worker that took it: 17% of the op at 1,024 patches on 16 threads, the
// 16-core device's profile). nil when every pair is one task anyway (many segments, or few
// threads): the per-worker packing then packs each pair once. In a wave each pair is cut so as
// to leave 4 tasks a thread; the cut never changes the bits.
func flashWaves(segs []backend.Segment, heads, hd, threads int) []flashWave {
	var pairs []attTask
	for _, sg := range segs {
		if sg.Len() > 0 {
			for h := range heads {
				pairs = append(pairs, attTask{seg: sg, head: h})
			}
		}
	}
	if len(pairs) >= 4*threads || threads < 2 {
		return nil
	}
	var waves []flashWave
	for p0 := 0; p0 < len(pairs); p0 += threads {
		w := flashWave{pairs: pairs[p0:min(p0+threads, len(pairs))]}
		perHead := max(1, chunks(4*threads, len(w.pairs)))
		for slot, p := range w.pairs {
			for _, t := range cutPair(p.seg, p.head, perHead, hd) {
				t.slot = slot
				w.tasks = append(w.tasks, t)
			}
		}
		waves = append(waves, w)
	}
	return waves
}

// flashKV is one (segment, head)'s packed V^T (rows vtStride(L) apart) and K (rows back to back).
type flashKV struct{ vt, kt []float32 }

// kvIn returns the packed V^T and K of a pair with L keys at the start of scratch ws.
func (j *attJob) kvIn(ws []float32, L int) flashKV {
	Ls := vtStride(L)
	return flashKV{vt: ws[:j.hd*Ls], kt: ws[j.hd*Ls:][:L*j.hd]}
}

// packFlashKV packs V^T and K of (keys, head) at the start of scratch ws.
func (j *attJob) packFlashKV(ws []float32, keys backend.Segment, head int) {
	kv := j.kvIn(ws, keys.Len())
	j.packVT(kv.vt, keys, head)
	j.packK(kv.kt, keys, head)
}

// runFlashOwn runs a task with the pair's K and V^T in the worker's own scratch ws, packing
// them there unless the worker's previous task was of the same pair.
func (j *attJob) runFlashOwn(ws []float32, fw *flashWorker, t attTask) {
	keys := t.seg.Keys()
	if !fw.valid || fw.keys != keys || fw.head != t.head {
		j.packFlashKV(ws, keys, t.head)
		fw.keys, fw.head, fw.valid = keys, t.head, true
	}
	j.runFlashRange(j.kvIn(ws, keys.Len()), ws, fw, t)
}

// runFlashRange runs a task's query range attQueries at a time, reading the pair's packed
// kv; ws is the worker's scratch (its part past flashKVLen: Q^T, O^T, scores).
func (j *attJob) runFlashRange(kv flashKV, ws []float32, fw *flashWorker, t attTask) {
	for q0 := t.q0; q0 < t.q1; q0 += attQueries {
		j.runFlash(kv, ws, fw, attTask{seg: t.seg, head: t.head, q0: q0, q1: min(q0+attQueries, t.q1)})
	}
}

// runFlash computes the task's queries (at most attQueries) for one head, in blocks of 32.
func (j *attJob) runFlash(kv flashKV, ws []float32, fw *flashWorker, t attTask) {
	keys := t.seg.Keys()
	L, hd := keys.Len(), j.hd
	Ls := vtStride(L)
	vt, kt := kv.vt, kv.kt
	own := ws[j.kvLen:]
	qt := own[:flashQB*hd*flashQ]
	ot := own[flashQB*hd*flashQ:][:flashQB*hd*flashQ]
	sc := own[2*flashQB*hd*flashQ:][:flashKeys*flashQ]
	nq := t.q1 - t.q0
	blocks := chunks(nq, flashQ)
	col := t.head * hd
	for b := range blocks {
		j.packQT(qt[b*hd*flashQ:(b+1)*hd*flashQ], t.q0+b*flashQ, min(flashQ, nq-b*flashQ), col)
	}
	var mx [flashQB][flashQ]float32
	var sum [flashQB][flashQ]float64
	for b := range mx {
		for c := range mx[b] {
			mx[b][c] = float32(math.Inf(-1))
		}
	}
	// The kernel's row pointers, set once: the score rows of each 6-key group, the O^T rows of
	// each block's 6-dimension groups; per key tile, the K rows and V^T columns of the tile.
	groups, dgroups := chunks(flashKeys, fmaMR), chunks(hd, fmaMR)
	scRows := rows(&fw.scRows, groups)
	for g := range scRows {
		for a := range fmaMR {
			scRows[g][a] = rowPtr(sc, min(g*fmaMR+a, flashKeys-1)*flashQ, flashQ)
		}
	}
	oRows := rows(&fw.oRows, blocks*dgroups)
	for b := range blocks {
		for g := range dgroups {
			for a := range fmaMR {
				oRows[b*dgroups+g][a] = rowPtr(ot, b*hd*flashQ+min(g*fmaMR+a, hd-1)*flashQ, flashQ)
			}
		}
	}
	kRows, vRows := rows(&fw.kRows, groups), rows(&fw.vRows, dgroups)
	for k0 := 0; k0 < L; k0 += flashKeys {
		nk := min(flashKeys, L-k0)
		kg := chunks(nk, fmaMR)
		for g := range kg {
			for a := range fmaMR {
				key := min(g*fmaMR+a, nk-1)
				kRows[g][a] = rowPtr(kt, (k0+key)*hd, hd)
			}
		}
		for g := range dgroups {
			for a := range fmaMR {
				vRows[g][a] = rowPtr(vt, min(g*fmaMR+a, hd-1)*Ls+k0, nk)
			}
		}
		carry := 0
		if k0 > 0 {
			carry = 1
		}
		for b := range blocks {
			qb, ob := unsafe.Pointer(&qt[b*hd*flashQ]), ot[b*hd*flashQ:(b+1)*hd*flashQ]
			for g := range kg { // S^T = K Q^T: 6 keys per call (a short group repeats its last key)
				ys := scRows[g]
				if g == kg-1 && nk%fmaMR != 0 {
					for a := nk % fmaMR; a < fmaMR; a++ {
						ys[a] = ys[nk%fmaMR-1]
					}
				}
				kernel.FMA6x32(&kRows[g], qb, hd, &ys, 0)
			}
			j.onlineSoftmax(sc, nk, &mx[b], &sum[b], ob, hd, k0 > 0)
			for g := range dgroups { // O^T += V^T P^T: 6 dimensions per call
				kernel.FMA6x32(&vRows[g], unsafe.Pointer(&sc[0]), nk, &oRows[b*dgroups+g], carry)
			}
		}
	}
	D := j.heads * hd
	for b := range blocks { // o = O^T / l, each query's row: float32(float64(o) / l)
		n := min(flashQ, nq-b*flashQ)
		out := j.o[(t.q0+b*flashQ)*D+col:][:(n-1)*D+hd]
		kernel.DivTranspose(&out[0], D, &ot[b*hd*flashQ], &sum[b][0], n, hd)
	}
}

// onlineSoftmax turns a [nk][32] score tile into p = exp(s*scale - m) with m the running
// column max, rescaling the block's sums and O^T columns whose max grew (rescale: not on the
// first tile, whose O^T the P.V pass overwrites).
func (j *attJob) onlineSoftmax(sc []float32, nk int, mx *[flashQ]float32, sum *[flashQ]float64, ob []float32, hd int, rescale bool) {
	var mt [flashQ]float32
	kernel.ColScaleMax(&sc[0], nk, j.scale, &mt)
	var alpha [flashQ]float32
	grew := false
	for c := range mt {
		mNew := max(mx[c], mt[c])
		alpha[c] = 1
		if rescale && mNew != mx[c] {
			alpha[c] = expNeg(mx[c] - mNew)
			sum[c] *= float64(alpha[c])
			grew = true
		}
		mx[c] = mNew
	}
	if grew {
		kernel.ColScale(&ob[0], hd, &alpha)
	}
	kernel.ColExpSum(&sc[0], nk, mx, sum)
}

// packK copies K of the key rows keys and head into kt [L][hd], the rows back to back: the
// six K rows a score call reads then lie in one run of memory that the hardware prefetches,
// where in qkv they lie a row stride (3D floats) apart.
func (j *attJob) packK(kt []float32, keys backend.Segment, head int) {
	hd := j.hd
	for i := range keys.Len() {
		copy(kt[i*hd:(i+1)*hd], j.k[(keys.Start+i)*j.stride+head*hd:][:hd])
	}
}

// packVT lays out V of the key rows keys and head transposed, vt[d*vtStride(L) + i] =
// V[keys.Start+i, d]: the x rows of O^T = V^T P^T, each dimension's keys contiguous, in 16 x 16
// blocks (kernel.Transpose), the copy's bits.
func (j *attJob) packVT(vt []float32, keys backend.Segment, head int) {
	L, hd, Ls := keys.Len(), j.hd, vtStride(keys.Len())
	if L == 0 {
		return
	}
	src := j.v[keys.Start*j.stride+head*hd:][:(L-1)*j.stride+hd]
	dst := vt[:(hd-1)*Ls+L]
	kernel.Transpose(unsafe.Pointer(&dst[0]), Ls, unsafe.Pointer(&src[0]), j.stride, L, hd)
}

// packQT lays out the n queries from q0 as one block's Q^T, qt[d*32 + c] = Q[q0+c, d], the
// lanes past n zero (their scores are computed and never read), in 16 x 16 blocks
// (kernel.Transpose), the copy's bits.
func (j *attJob) packQT(qt []float32, q0, n, col int) {
	hd := j.hd
	src := j.q[q0*j.stride+col:][:(n-1)*j.stride+hd]
	kernel.Transpose(unsafe.Pointer(&qt[0]), flashQ, unsafe.Pointer(&src[0]), j.stride, n, hd)
	if n < flashQ {
		for d := range hd {
			clear(qt[d*flashQ+n : (d+1)*flashQ])
		}
	}
}
