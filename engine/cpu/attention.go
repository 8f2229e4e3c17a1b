// attention.go: softmax(q k^T * scale) v per segment and head, without a seq x seq matrix.
//
// Invariant: a query only ever sees the keys of its own segment (one image or one temporal
// slice; Segment.Keys: the segment's own rows, or the key range a key mask left); per query
// the scores are one float32 row over those keys, the softmax subtracts the
// row max, sums in float64, and PV is one in-order float32 accumulator per output, divided by
// the sum at the end. Memory per worker: V^T of one (segment, head) plus three score rows.
// Mutation that would silently break it: attending over [0, seq) instead of [Start, End) (no
// segment mask); every shape is kept and a single-image test cannot see it.
// With kernel.UseFMA (AVX2+FMA, fixed at start-up) the same algorithm runs through the FMA kernel
// (attention_fma.go: K and V packed per (segment, head), six queries per tile); the generic
// path below rounds products and sums separately, so the two differ in the last bits only.
package cpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// attQueries is the number of queries per task (a multiple of 6 and of 32: the kernels' rows and the
// flash path's query blocks).
// Each task transposes V of its (segment, head) once: at 192 queries that copy is ~2% of the
// task (9% at 48, measured at seq 1024, hd 72).
const attQueries = 192

type attTask struct {
	seg    backend.Segment
	head   int
	q0, q1 int // query rows, absolute
	slot   int // the flash path's waves: whose scratch holds the pair's packed K and V^T
}

type attJob struct {
	q, k, v, o []float32
	stride     int
	heads, hd  int
	scale      float32
	tasks      []attTask
	kvLen      int // the flash path: floats of a packed (segment, head) at the start of a scratch
}

// Attention writes o[s, h*hd:(h+1)*hd] = softmax(q_s.K^T*scale) V over s's segment. Rows that
// no segment covers are left as they are. Segments must not overlap.
func (b *Backend) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if heads <= 0 || headDim <= 0 || stride < heads*headDim {
		panic(fmt.Sprintf("cpu: Attention: bad shape heads %d headDim %d stride %d", heads, headDim, stride))
	}
	end, keyEnd, longest := checkSegments(segs)
	D := heads * headDim
	nq, nk := backend.Strided(end, stride, D), backend.Strided(keyEnd, stride, D)
	job := attJob{
		q: span(q, nq, "Attention q"), k: span(k, nk, "Attention k"), v: span(v, nk, "Attention v"),
		o: span(o, end*D, "Attention o"), stride: stride, heads: heads, hd: headDim, scale: scale,
	}
	noOverlap("Attention", o, end*D, q, nq)
	noOverlap("Attention", o, end*D, k, nk)
	noOverlap("Attention", o, end*D, v, nk)
	if kernel.UseFMA && kernel.UseAVX512 { // fixed at start-up, like MatMul's choice (attention_flash.go)
		b.growScratch(attFlashScratch(longest, headDim))
		job.kvLen = flashKVLen(longest, headDim)
		workers := make([]flashWorker, b.threads)
		if waves := flashWaves(segs, heads, headDim, b.threads); waves != nil {
			for _, w := range waves {
				b.parallel(len(w.pairs), func(_, p int) { // pair p's K and V^T into scratch p, once
					job.packFlashKV(b.scratch[p], w.pairs[p].seg.Keys(), w.pairs[p].head)
				})
				if b.ctx.Err() != nil {
					return // cancelled: some pair may be unpacked
				}
				b.parallel(len(w.tasks), func(wk, t int) {
					tk := w.tasks[t]
					job.runFlashRange(job.kvIn(b.scratch[tk.slot], tk.seg.Keys().Len()), b.scratch[wk], &workers[wk], tk)
				})
			}
			return
		}
		job.tasks = flashTasks(segs, heads, headDim, b.threads)
		b.parallel(len(job.tasks), func(wk, t int) {
			job.runFlashOwn(b.scratch[wk], &workers[wk], job.tasks[t])
		})
		return
	}
	for _, sg := range segs {
		for h := range heads {
			for q0 := sg.Start; q0 < sg.End; q0 += attQueries {
				job.tasks = append(job.tasks, attTask{seg: sg, head: h, q0: q0, q1: min(q0+attQueries, sg.End)})
			}
		}
	}
	if kernel.UseFMA { // fixed at start-up, like MatMul's choice (attention_fma.go)
		b.growScratch(attFMAScratch(longest, headDim))
		b.parallel(len(job.tasks), func(wk, t int) {
			job.runFMA(b.scratch[wk], job.tasks[t])
		})
		return
	}
	b.growScratch(longest * (headDim + 3))
	b.parallel(len(job.tasks), func(wk, t int) {
		job.run(b.scratch[wk], job.tasks[t])
	})
}

// checkSegments panics on a negative, inverted or overlapping segment, or on one whose
// queries have no key; it returns the largest End of the queries and of the keys, and the
// most keys of a segment.
func checkSegments(segs []backend.Segment) (end, keyEnd, longest int) {
	sorted := slices.Clone(segs)
	slices.SortFunc(sorted, func(a, b backend.Segment) int { return a.Start - b.Start })
	prev := 0
	for _, sg := range sorted {
		keys := sg.Keys()
		if sg.Start < prev || sg.End < sg.Start || keys.Start < 0 || keys.End < keys.Start {
			panic(fmt.Sprintf("cpu: Attention: segments %v overlap or are inverted", segs))
		}
		if sg.Len() > 0 && keys.Len() == 0 {
			panic(fmt.Sprintf("cpu: Attention: segment %v has queries and no key", sg))
		}
		prev = sg.End
		end = max(end, sg.End)
		keyEnd = max(keyEnd, keys.End)
		longest = max(longest, keys.Len())
	}
	return end, keyEnd, longest
}

// run computes the task's queries for one head, three at a time.
func (j *attJob) run(ws []float32, t attTask) {
	L := t.seg.Keys().Len()
	vt := ws[:j.hd*L]
	scores := ws[j.hd*L : (j.hd+3)*L]
	j.transposeV(vt, t.seg, t.head)
	for r := t.q0; r < t.q1; r += 3 {
		nr := min(3, t.q1-r)
		rows := [3]int{r, r + min(1, nr-1), r + min(2, nr-1)}
		j.scoreRows(scores, rows, t.seg, t.head)
		var sums [3]float64
		for a := range nr {
			sums[a] = softmaxRow(scores[a*L : (a+1)*L])
		}
		j.weightedV(scores, vt, rows, nr, sums, L, t.head)
	}
}

// transposeV copies V of (seg's keys, head) into vt [hd][L], so PV is a row-by-row dot product.
func (j *attJob) transposeV(vt []float32, seg backend.Segment, head int) {
	keys := seg.Keys()
	L := keys.Len()
	for i := range L {
		row := j.v[(keys.Start+i)*j.stride+head*j.hd:][:j.hd]
		for d, x := range row {
			vt[d*L+i] = x
		}
	}
}

// scoreRows fills scores[a*L+i] = q_rows[a] . k_(keys.Start+i) * scale for the segment's keys only.
func (j *attJob) scoreRows(scores []float32, rows [3]int, seg backend.Segment, head int) {
	keys := seg.Keys()
	L, hd, col := keys.Len(), j.hd, head*j.hd
	qa := rowPtr(j.q, rows[0]*j.stride+col, hd)
	qb := rowPtr(j.q, rows[1]*j.stride+col, hd)
	qc := rowPtr(j.q, rows[2]*j.stride+col, hd)
	for i := 0; i < L; i += 2 {
		ni := min(2, L-i)
		ka := rowPtr(j.k, (keys.Start+i)*j.stride+col, hd)
		kb := rowPtr(j.k, (keys.Start+i+ni-1)*j.stride+col, hd)
		var acc [6]float32
		kernel.Dot3x2(qa, qb, qc, ka, kb, hd, &acc)
		for a := range 3 {
			for c := range ni {
				scores[a*L+i+c] = acc[2*a+c] * j.scale
			}
		}
	}
}

// weightedV writes o[row] = (p_row . V) / sum for the nr valid rows; p is the score rows after
// softmaxRow, vt is V transposed.
func (j *attJob) weightedV(p, vt []float32, rows [3]int, nr int, sums [3]float64, L, head int) {
	pa := rowPtr(p, 0, L)
	pb := rowPtr(p, min(1, nr-1)*L, L)
	pc := rowPtr(p, min(2, nr-1)*L, L)
	D := j.heads * j.hd
	for d := 0; d < j.hd; d += 2 {
		nd := min(2, j.hd-d)
		va := rowPtr(vt, d*L, L)
		vb := rowPtr(vt, (d+nd-1)*L, L)
		var acc [6]float32
		kernel.Dot3x2(pa, pb, pc, va, vb, L, &acc)
		for a := range nr {
			out := j.o[rows[a]*D+head*j.hd+d:][:nd]
			for c := range out {
				out[c] = float32(float64(acc[2*a+c]) / sums[a])
			}
		}
	}
}

// softmaxRow replaces s by exp(s - max(s)) (unnormalized) and returns the float64 sum.
func softmaxRow(s []float32) float64 {
	m := float32(math.Inf(-1))
	for _, x := range s {
		m = max(m, x)
	}
	sum := 0.0
	for i, x := range s {
		e := expNeg(x - m)
		s[i] = e
		sum += float64(e)
	}
	return sum
}

// expNeg is exp(x) for x <= 0, rounded to float32 (within 1 ulp of float32(math.Exp(x)),
// tested): 2^n * e^r with n = round(x/ln2), |r| <= ln2/2, e^r by its degree-7 Taylor
// polynomial in float64 (truncation < 6e-9 relative). About 4x faster than math.Exp.
func expNeg(x float32) float32 {
	if x != x {
		return x
	}
	if x < -104 { // exp(-104) < half the smallest float32 subnormal
		return 0
	}
	const (
		log2e = 1.4426950408889634
		ln2   = 0.6931471805599453
		round = 6755399441055744.0 // 1.5*2^52: adding it rounds to an integer
	)
	t := float64(x)
	n := (t*log2e + round) - round
	r := t - n*ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return float32(p * math.Float64frombits(uint64(int64(n)+1023)<<52))
}
