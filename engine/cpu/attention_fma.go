// attention_fma.go: the Attention path that drives the AVX2+FMA micro-kernel (amd64 only).
//
// Invariant: as in attention.go, a query sees only its own segment's keys; per query the score
// s[i] = (fma chain over d = 0..hd-1 of q[d]*k_i[d], from +0) * scale, the softmax is
// softmaxRow's, and o[d] = (fma chain over i = 0..L-1 of p[i]*v_i[d], from +0) / sum, the
// division in float64. Every chain is one lane of kernel.FMA6x16, so a query's bits depend only
// on its own q row and its segment: not on its slot in a 6-query tile (short tiles repeat
// their last query and drop the copy), the task cut (attQueries) or the thread count. Keys
// past L and dimensions past hd are zero-padded lanes, computed and never read.
// Numerics: FMA here, one rounding per step; the generic path (kernel.Dot3x2) rounds twice; the two
// differ in the last bits, never within one (kernel.UseFMA is fixed at start-up).
// Mutation that would silently break it: running softmaxRow over the padded score row
// (Lp instead of L entries): the padded zeros would join the max and the sum, a bias that a
// segment length that is a multiple of 16 never shows.
package cpu

import (
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// attFMAScratch is the per-worker scratch of the FMA path for segments of at most L keys.
func attFMAScratch(L, hd int) int {
	Lp, hdp := chunks(L, fmaNR)*fmaNR, chunks(hd, fmaNR)*fmaNR
	return Lp*hd + hdp*L + fmaMR*Lp + fmaMR*hdp
}

// runFMA computes the task's queries for one head, six at a time.
func (j *attJob) runFMA(ws []float32, t attTask) {
	L, hd := t.seg.Keys().Len(), j.hd
	Lp, hdp := chunks(L, fmaNR)*fmaNR, chunks(hd, fmaNR)*fmaNR
	kp := ws[:Lp*hd]
	vp := ws[Lp*hd:][:hdp*L]
	sc := ws[Lp*hd+hdp*L:][:fmaMR*Lp]
	ot := ws[Lp*hd+hdp*L+fmaMR*Lp:][:fmaMR*hdp]
	j.packKV(kp, vp, t.seg, t.head)
	col, D := t.head*hd, j.heads*hd
	for r := t.q0; r < t.q1; r += fmaMR {
		nr := min(fmaMR, t.q1-r)
		var xp, yp [fmaMR]unsafe.Pointer
		for a := range fmaMR {
			xp[a] = rowPtr(j.q, (r+min(a, nr-1))*j.stride+col, hd)
		}
		for s := range Lp / fmaNR { // scores, 16 keys per strip
			for a := range fmaMR {
				yp[a] = rowPtr(sc, a*Lp+s*fmaNR, fmaNR)
			}
			kernel.FMA6x16(&xp, rowPtr(kp, s*fmaNR*hd, fmaNR*hd), hd, &yp, 0)
		}
		var sums [fmaMR]float64
		for a := range nr {
			row := sc[a*Lp : a*Lp+L]
			for i := range row {
				row[i] *= j.scale
			}
			sums[a] = softmaxRow(row)
		}
		for a := range fmaMR {
			xp[a] = rowPtr(sc, min(a, nr-1)*Lp, L)
		}
		for s := range hdp / fmaNR { // p V, 16 dimensions per strip
			for a := range fmaMR {
				yp[a] = rowPtr(ot, a*hdp+s*fmaNR, fmaNR)
			}
			kernel.FMA6x16(&xp, rowPtr(vp, s*fmaNR*L, fmaNR*L), L, &yp, 0)
		}
		for a := range nr {
			out := j.o[(r+a)*D+col:][:hd]
			for d := range out {
				out[d] = float32(float64(ot[a*hdp+d]) / sums[a])
			}
		}
	}
}

// packKV lays out K and V of (seg's keys, head) for the kernel, zero-padded to whole strips:
// kp[s*16*hd + d*16 + c] = K[Start+16s+c, d] (strips of 16 keys, the reduction over d) and
// vp[s*16*L + i*16 + c] = V[Start+i, 16s+c] (strips of 16 dimensions, the reduction over keys),
// Start the keys' first row.
func (j *attJob) packKV(kp, vp []float32, seg backend.Segment, head int) {
	keys := seg.Keys()
	L, hd := keys.Len(), j.hd
	Lp := len(kp) / hd
	for i := range Lp {
		dst := kp[i/fmaNR*fmaNR*hd+i%fmaNR:][:fmaNR*(hd-1)+1]
		if i >= L {
			for d := range hd {
				dst[fmaNR*d] = 0
			}
			continue
		}
		for d, x := range j.k[(keys.Start+i)*j.stride+head*hd:][:hd] {
			dst[fmaNR*d] = x
		}
	}
	hdp := len(vp) / L
	for i := range L {
		row := j.v[(keys.Start+i)*j.stride+head*hd:][:hd]
		for d := range hdp {
			x := float32(0)
			if d < hd {
				x = row[d]
			}
			vp[d/fmaNR*fmaNR*L+i*fmaNR+d%fmaNR] = x
		}
	}
}
