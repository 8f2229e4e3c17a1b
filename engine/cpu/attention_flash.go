// attention_flash.go: the AVX-512 Attention path: flash-style tiles through kernel.FMA6x32,
// online softmax through kernel.ScaleMax / kernel.ExpSum (amd64 with AVX-512F only).
//
// Invariant: as in attention.go, a query sees only its own segment's keys. Per query the keys
// are taken in tiles of flashKeys from the segment's start; for each tile the scores are
// s[i] = (fma chain over d of q[d]*k_i[d], from +0) * scale, the running max m and float64 sum l
// are updated online (o and l scaled by exp(m_old - m_new) when the max grows), p = exp(s - m),
// and o[d] runs one fma chain over the tile's keys carried from the previous tile; at the end
// o[d] / l in float64. The tiles start at fixed offsets of the segment, so a query's bits depend
// only on its q row, its segment and flashKeys: not on its slot in a 6-query tile (short tiles
// repeat their last query and drop the copy), the task cut (attQueries) or the thread count.
// Memory per worker: K and V of one (segment, head), packed once and reused by every task of
// that head the worker takes, plus the task's o rows and one 6 x flashKeys score tile: no
// seq x seq matrix.
// Numerics: differs from the AVX2 and generic paths in the last bits (online rescaling, the
// polynomial exp); each path is deterministic on its own, and all pass the same parity tests.
// Mutation that would silently break it: skipping the rescale of o when the max grows in a
// later tile (the sum l would then disagree with o): only rows whose max is not in their first
// tile change, so the parity tests use segments longer than flashKeys with the max anywhere.
package cpu

import (
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// flashKeys is the key tile: its K (flashKeys x hd) and V (flashKeys x hd rounded up to 32)
// strips, 74 + 98 KiB at hd 72, stay in L2 while all of a task's queries pass over them.
const flashKeys = 256

const flashNR = 2 * fmaNR // FMA6x32's lanes

// attFlashScratch is the per-worker scratch of the flash path for segments of at most L keys.
func attFlashScratch(L, hd int) int {
	Lp, hdp := chunks(L, flashNR)*flashNR, chunks(hd, flashNR)*flashNR
	return Lp*hd + L*hdp + attQueries*hdp + fmaMR*flashKeys
}

// flashWorker is what one worker keeps between the tasks of one Attention call: which
// (segment, head) its packed K and V hold.
type flashWorker struct {
	seg   backend.Segment
	head  int
	valid bool
}

// flashTaskFLOPs bounds one flash task's work (about 80 ms on one core): a cancelled run stops
// at the next task, well within a second, whatever the page.
const flashTaskFLOPs = 1e10

// flashTasks cuts each (segment, head) into as few query ranges as leave 4 tasks per thread,
// each within flashTaskFLOPs and a whole number of attQueries blocks: a worker packs a head's
// K and V once per range it takes, so on 2 threads with 16 heads each head is packed once
// (not once per worker, as with one task per query block). The cut never changes the bits.
func flashTasks(segs []backend.Segment, heads, hd, threads int) []attTask {
	perHead := max(1, chunks(4*threads, len(segs)*heads))
	var tasks []attTask
	for _, sg := range segs {
		L := sg.End - sg.Start
		if L == 0 {
			continue
		}
		most := max(attQueries, int(flashTaskFLOPs/(4*float64(L)*float64(hd)))/attQueries*attQueries)
		per := min(most, chunks(chunks(L, perHead), attQueries)*attQueries)
		for h := range heads {
			for q0 := sg.Start; q0 < sg.End; q0 += per {
				tasks = append(tasks, attTask{sg, h, q0, min(q0+per, sg.End)})
			}
		}
	}
	return tasks
}

// runFlashRange runs a task's query range attQueries at a time.
func (j *attJob) runFlashRange(ws []float32, fw *flashWorker, t attTask) {
	for q0 := t.q0; q0 < t.q1; q0 += attQueries {
		j.runFlash(ws, fw, attTask{t.seg, t.head, q0, min(q0+attQueries, t.q1)})
	}
}

// runFlash computes the task's queries for one head, six at a time within each key tile.
func (j *attJob) runFlash(ws []float32, fw *flashWorker, t attTask) {
	L, hd := t.seg.End-t.seg.Start, j.hd
	Lp, hdp := chunks(L, flashNR)*flashNR, chunks(hd, flashNR)*flashNR
	kp := ws[:Lp*hd]
	vp := ws[Lp*hd:][:L*hdp]
	ot := ws[Lp*hd+L*hdp:][:attQueries*hdp]
	sc := ws[Lp*hd+L*hdp+attQueries*hdp:][:fmaMR*flashKeys]
	if !fw.valid || fw.seg != t.seg || fw.head != t.head {
		j.packFlashKV(kp, vp, t.seg, t.head)
		*fw = flashWorker{t.seg, t.head, true}
	}
	nq := t.q1 - t.q0
	var mx [attQueries]float32
	var sum [attQueries]float64
	col := t.head * hd
	for k0 := 0; k0 < L; k0 += flashKeys {
		nk := min(flashKeys, L-k0)
		for r := 0; r < nq; r += fmaMR {
			nr := min(fmaMR, nq-r)
			var xp, yp [fmaMR]unsafe.Pointer
			for a := range fmaMR {
				xp[a] = rowPtr(j.q, (t.q0+r+min(a, nr-1))*j.stride+col, hd)
			}
			for s := 0; s < nk; s += flashNR { // scores, 32 keys per strip
				for a := range fmaMR {
					yp[a] = rowPtr(sc, a*flashKeys+s, flashNR)
				}
				kernel.FMA6x32(&xp, rowPtr(kp, (k0+s)*hd, flashNR*hd), hd, &yp, 0)
			}
			for a := range nr {
				q := r + a
				row := &sc[a*flashKeys]
				mNew := max(mx[q], kernel.ScaleMax(row, nk, j.scale))
				if k0 > 0 && mNew != mx[q] { // the max grew: rescale what this query has so far
					alpha := expNeg(mx[q] - mNew)
					sum[q] *= float64(alpha)
					o := ot[q*hdp : (q+1)*hdp]
					for d := range o {
						o[d] *= alpha
					}
				}
				sum[q] += kernel.ExpSum(row, nk, mNew)
				mx[q] = mNew
			}
			carry := 0
			if k0 > 0 {
				carry = 1
			}
			for a := range fmaMR {
				xp[a] = rowPtr(sc, min(a, nr-1)*flashKeys, nk)
			}
			for s := range hdp / flashNR { // p V over the tile's keys, 32 dimensions per strip
				for a := range fmaMR {
					yp[a] = rowPtr(ot, (r+min(a, nr-1))*hdp+s*flashNR, flashNR)
				}
				kernel.FMA6x32(&xp, rowPtr(vp, s*flashNR*L+k0*flashNR, flashNR*nk), nk, &yp, carry)
			}
		}
	}
	D := j.heads * hd
	for q := range nq {
		out := j.o[(t.q0+q)*D+col:][:hd]
		for d := range out {
			out[d] = float32(float64(ot[q*hdp+d]) / sum[q])
		}
	}
}

// packFlashKV lays out K and V of (seg, head) for FMA6x32, zero-padded to whole strips:
// kp[s*32*hd + d*32 + c] = K[Start+32s+c, d] (strips of 32 keys, the reduction over d) and
// vp[s*32*L + i*32 + c] = V[Start+i, 32s+c] (strips of 32 dimensions, the reduction over keys,
// so a key tile of a strip is contiguous).
func (j *attJob) packFlashKV(kp, vp []float32, seg backend.Segment, head int) {
	L, hd := seg.End-seg.Start, j.hd
	Lp, hdp := len(kp)/hd, len(vp)/L
	for i := 0; i < Lp; i += flashNR {
		strip := kp[i*hd : (i+flashNR)*hd]
		for c := range flashNR {
			if i+c >= L {
				for d := range hd {
					strip[d*flashNR+c] = 0
				}
				continue
			}
			for d, x := range j.k[(seg.Start+i+c)*j.stride+head*hd:][:hd] {
				strip[d*flashNR+c] = x
			}
		}
	}
	for i := range L {
		row := j.v[(seg.Start+i)*j.stride+head*hd:][:hd]
		for s := range hdp / flashNR {
			dst := vp[s*flashNR*L+i*flashNR:][:flashNR]
			n := copy(dst, row[min(s*flashNR, hd):])
			clear(dst[n:])
		}
	}
}
