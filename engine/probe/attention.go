package probe

// attention.go: attention rows (one, a batch, or the mean over heads), attention rollout,
// per-head distance and entropy, top-k patches — computed on the fly from the kept
// post-rope q and k, a few rows per worker at a time; no S x S matrix is ever held. This is
// the one attention-row implementation: the window, the dump and the analyses all use it.
// The q . k scores run through the micro-kernels of engine/internal/kernel (the AVX2+FMA
// kernel.FMA6x16 where the CPU has it, against keys packed once per call, for the heads the
// call needs; a single query is scored against the keys where they lie: onequery.go); the
// softmax, head means and the rollout's v . A are float64. These calls may run at the same
// time as each other and as the run that fills the Store. The rollout's head fusion and
// discard are in rollout.go, the column and the pooled matrix in reverse.go.
//
// Invariant: every attention row here is softmax(q_i . K^T * scale) over the keys of i's own
// segment (up to float32 scores: see Scores below), and the default
// Rollout is e_q Â_L Â_{L-1} ... Â_0 with Â_l = rownorm(0.5*mean_h A_l + 0.5*I), applied
// from the top block down. The mutation that would silently break it: dropping the 0.5*I
// term (or applying the blocks from 0 upward). The result is still a probability row over
// the segment and still looks like a heatmap, but it is the wrong one.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// qTile is the number of queries scored together: the rows of one micro-kernel call, so each
// key is loaded once for all of them.
const qTile = 6

// keyStrip is the number of keys one kernel.FMA6x16 call scores: its 16 lanes.
const keyStrip = 16

// maxChunks bounds the partial sums of one rollout step. The chunking depends only on the
// number of active queries, so the result does not depend on GOMAXPROCS or on scheduling.
const maxChunks = 64

// Scores: every score is ONE float32 dot product q_i . k_j, a single accumulator over the
// head dimensions in index order from +0 (kernel.FMA6x16 with kernel.UseFMA, one rounding
// per step; kernel.Dot3x2 otherwise, two), widened to float64 and multiplied by the float64
// scale; everything after it (max, exp, normalization, head means, the rollout's v.A) is
// float64 as before. A score's bits depend only on its query row, its key row and the kernel
// (fixed at start-up): not on the query's slot in a tile (short tiles repeat their last query
// and drop the copy), the key's lane in a strip (keys past the segment are zero-padded lanes,
// computed and never read), the grouping, the chunking or GOMAXPROCS. Against float64 dot
// products a score differs by about 2^-24 * sum_x |q_x k_x| * scale.

// attnBlock is one kept block's post-rope q|k rows with the shape needed to score them.
type attnBlock struct {
	qk           []float32 // [S, 2D]: q (D) then k (D) per row
	d, hd, heads int
	scale        float64
	masked       []bool // key rows the run's attention did not see (Store.Views: masked or dropped); nil: none
	dropped      []bool // rows the block did not run at all (Store.Views: dropped); nil: none
	// With kernel.UseFMA (decided when the block is set up): the keys of the segments asked
	// for, packed for the kernel by packKeys; kpOff maps a segment's Start to its region, and
	// slot[h] is head h's place inside a region (-1: head h is not packed).
	kp     []float32
	kpOff  map[int]int
	slot   []int
	packed int // heads packed per region
}

// attnBlock sets up block for scoring queries of the segments segs (repeats allowed) with
// every head.
func (s *Store) attnBlock(block int, segs ...backend.Segment) (attnBlock, error) {
	return s.attnBlockHeads(block, nil, segs...)
}

// attnBlockHeads sets up block for scoring queries of the segments segs with the heads
// listed (nil: every head); only those heads' keys are packed.
func (s *Store) attnBlockHeads(block int, heads []int, segs ...backend.Segment) (attnBlock, error) {
	ab, err := s.attnBlockBare(block)
	switch {
	case err != nil || !kernel.UseFMA:
	case heads == nil:
		ab.packIfFMA(segs)
	default:
		ab.packKeys(segs, heads)
	}
	return ab, err
}

// packIfFMA packs every head's keys of segs where scores need them packed (kernel.UseFMA).
func (ab *attnBlock) packIfFMA(segs []backend.Segment) {
	if !kernel.UseFMA {
		return
	}
	heads := make([]int, ab.heads)
	for h := range heads {
		heads[h] = h
	}
	ab.packKeys(segs, heads)
}

// attnScale is the scores' scale, 1/sqrt(head dim).
func (s *Store) attnScale() float64 { return 1 / math.Sqrt(float64(s.HeadDim)) }

// attnBlockBare sets up block without packing any key: for the one-query paths
// (onequery.go), which read the keys where they are.
func (s *Store) attnBlockBare(block int) (attnBlock, error) {
	qk, err := s.QK(block)
	if err != nil {
		return attnBlock{}, err
	}
	hd := s.HeadDim
	return attnBlock{qk: qk, d: s.Hidden, hd: hd, heads: s.Heads, scale: s.attnScale(), masked: s.maskedKeys(block),
		dropped: s.droppedBefore(block)}, nil
}

// padded is L rounded up to whole key strips.
func padded(L int) int { return (L + keyStrip - 1) / keyStrip * keyStrip }

// packKeys lays out the keys of every segment of segs for kernel.FMA6x16, for the heads
// listed, in strips of 16 keys, k-major and zero-padded: for a segment of L keys
// (Lp = padded(L)) at region off = kpOff[Start] and head h in slot[h],
// kp[off + slot[h]*Lp*hd + s*16*hd + x*16 + c] = k_{Start+16s+c}[h*hd + x], and 0 for
// 16s+c >= L. The (segment, head) pairs are copied on all cores.
func (ab *attnBlock) packKeys(segs []backend.Segment, heads []int) {
	type task struct {
		seg     backend.Segment
		h, base int
	}
	var tasks []task
	ab.kpOff = map[int]int{}
	ab.slot = make([]int, ab.heads)
	for h := range ab.slot {
		ab.slot[h] = -1
	}
	for i, h := range heads {
		ab.slot[h] = i
	}
	ab.packed = len(heads)
	n, hd, D := 0, ab.hd, ab.d
	for _, seg := range segs {
		if _, ok := ab.kpOff[seg.Start]; ok || seg.End <= seg.Start {
			continue
		}
		ab.kpOff[seg.Start] = n
		Lp := padded(seg.End - seg.Start)
		for i, h := range heads {
			tasks = append(tasks, task{seg, h, n + i*Lp*hd})
		}
		n += len(heads) * Lp * hd
	}
	ab.kp = make([]float32, n) // the padding stays 0
	par.Do(len(tasks), par.Workers(len(tasks)), func(_, t int) {
		tk := tasks[t]
		for i := range tk.seg.End - tk.seg.Start {
			dst := ab.kp[tk.base+i/keyStrip*keyStrip*hd+i%keyStrip:][:keyStrip*(hd-1)+1]
			for x, v := range ab.qk[(tk.seg.Start+i)*2*D+D+tk.h*hd:][:hd] {
				dst[keyStrip*x] = v
			}
		}
	})
}

func (s *Store) checkQuery(q int) error {
	if q < 0 || q >= s.Layout.Rows() {
		return fmt.Errorf("query %d outside %d patches", q, s.Layout.Rows())
	}
	return nil
}

// scratch is one worker's buffers: score rows, head-mean rows (or, in HeadStats, distance
// rows) and the kernel's float32 output rows.
type scratch struct {
	s, m []float64
	y    []float32
}

func newScratch(longest int) *scratch {
	return &scratch{s: make([]float64, qTile*longest), m: make([]float64, qTile*longest), y: make([]float32, qTile*padded(longest))}
}

// row returns the a-th row of length L of buf.
func row(buf []float64, a, L int) []float64 { return buf[a*L : (a+1)*L] }

// f32Ptr is the address of s[off] after a bounds check of s[off : off+n], the n elements a
// kernel will read or write there: an indexing bug panics instead of touching stray memory.
func f32Ptr(s []float32, off, n int) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(s[off : off+n]))
}

// scores fills row a of sc.s (length L = segment length) with q_qs[a] . k_j * scale for
// every key j of seg, for a < len(qs) <= qTile (see Scores above for the numerics).
func (ab *attnBlock) scores(sc *scratch, head int, qs []int, seg backend.Segment) {
	L, hd, D := seg.End-seg.Start, ab.hd, ab.d
	n := len(qs)
	var xp [qTile]unsafe.Pointer
	for t := range qTile {
		xp[t] = f32Ptr(ab.qk, qs[min(t, n-1)]*2*D+head*hd, hd)
	}
	if kernel.UseFMA {
		off, ok := ab.kpOff[seg.Start]
		if !ok {
			panic(fmt.Sprintf("probe: keys of segment %v not packed", seg))
		}
		if ab.slot[head] < 0 {
			panic(fmt.Sprintf("probe: keys of head %d not packed", head))
		}
		Lp := padded(L)
		kp := ab.kp[off+ab.slot[head]*Lp*hd:][:Lp*hd]
		y := sc.y[:qTile*Lp]
		var yp [qTile]unsafe.Pointer
		for s := range Lp / keyStrip {
			for t := range qTile {
				yp[t] = f32Ptr(y, t*Lp+s*keyStrip, keyStrip)
			}
			kernel.FMA6x16(&xp, f32Ptr(kp, s*keyStrip*hd, keyStrip*hd), hd, &yp, 0)
		}
		for a := range n {
			dst := row(sc.s, a, L)
			for j, x := range y[a*Lp:][:L] {
				dst[j] = float64(x) * ab.scale
			}
			ab.dropMasked(dst, seg.Start)
		}
		return
	}
	off := seg.Start*2*D + D + head*hd
	for a := 0; a < n; a += 3 { // three queries by two keys per Dot3x2 call
		x0, x1, x2 := xp[a], xp[min(a+1, n-1)], xp[min(a+2, n-1)]
		for j := 0; j < L; j += 2 {
			var acc [6]float32
			k0 := f32Ptr(ab.qk, off+j*2*D, hd)
			k1 := f32Ptr(ab.qk, off+min(j+1, L-1)*2*D, hd)
			kernel.Dot3x2(x0, x1, x2, k0, k1, hd, &acc)
			for b := range min(3, n-a) {
				dst := row(sc.s, a+b, L)
				dst[j] = float64(acc[2*b]) * ab.scale
				if j+1 < L {
					dst[j+1] = float64(acc[2*b+1]) * ab.scale
				}
			}
		}
	}
	for a := range n {
		ab.dropMasked(row(sc.s, a, L), seg.Start)
	}
}

// clearDropped zeroes the rows of sc.m (length L) of the queries the block did not run.
func (ab *attnBlock) clearDropped(sc *scratch, qs []int, L int) {
	if ab.dropped == nil {
		return
	}
	for a, q := range qs {
		if ab.dropped[q] {
			clear(row(sc.m, a, L))
		}
	}
}

// dropMasked sets the scores of the masked keys among a row's (the keys from row start on) to
// -inf: softmaxExp and expNonPos then give them exactly 0, as the run's attention, which never
// saw them (engine/intervene/keymask.go, geom.Views).
func (ab *attnBlock) dropMasked(scores []float64, start int) {
	if ab.masked == nil {
		return
	}
	for j, m := range ab.masked[start:][:len(scores)] {
		if m {
			scores[j] = math.Inf(-1)
		}
	}
}

// softmaxExp replaces s by exp(s - max s) and returns the sum (the normalizer).
func softmaxExp(s []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range s {
		if x > mx {
			mx = x
		}
	}
	var z float64
	for j, x := range s {
		e := expNonPos(x - mx)
		s[j] = e
		z += e
	}
	return z
}

// expNonPos is exp(x) for x <= 0 (a score minus the row maximum), within 1e-11 relative
// of math.Exp and about twice as fast: exp(x) = 2^n e^r, n = round(x/ln2), |r| <= ln2/2,
// e^r by its degree-9 Taylor polynomial (truncation below 7.1e-12). Below -708 it is 0 (the
// rest of the row holds a 1, so such terms do not count); NaN stays NaN.
func expNonPos(x float64) float64 {
	if x < -708 {
		return 0
	}
	const (
		log2e  = 1.4426950408889634
		ln2Hi  = 6.93147180369123816490e-01 // ln2 = ln2Hi + ln2Lo, ln2Hi*n exact for |n| < 2^11
		ln2Lo  = 1.90821492927058770002e-10
		round  = 6755399441055744.0 // 1.5*2^52: adding it rounds to an integer
		c2, c3 = 1.0 / 2, 1.0 / 6
		c4, c5 = 1.0 / 24, 1.0 / 120
		c6, c7 = 1.0 / 720, 1.0 / 5040
		c8, c9 = 1.0 / 40320, 1.0 / 362880
	)
	n := (x*log2e + round) - round
	r := (x - n*ln2Hi) - n*ln2Lo
	r2 := r * r
	r4 := r2 * r2
	// Estrin's scheme: shorter dependency chains than Horner.
	p01 := 1 + r
	p23 := c2 + c3*r
	p45 := c4 + c5*r
	p67 := c6 + c7*r
	p89 := c8 + c9*r
	p := (p01 + r2*p23) + r4*((p45+r2*p67)+r4*p89)
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// headMeans fills row a of sc.m with mean_h A_h[qs[a], seg] for a < len(qs).
func (ab *attnBlock) headMeans(sc *scratch, qs []int, seg backend.Segment) {
	L := seg.End - seg.Start
	clear(sc.m[:len(qs)*L])
	for h := range ab.heads {
		ab.scores(sc, h, qs, seg)
		for a := range qs {
			s, m := row(sc.s, a, L), row(sc.m, a, L)
			inv := 1 / softmaxExp(s)
			for j, e := range s {
				m[j] += e * inv
			}
		}
	}
	invH := 1 / float64(ab.heads)
	for a := range qs {
		for j := range row(sc.m, a, L) {
			sc.m[a*L+j] *= invH
		}
	}
}

// qGroup is up to qTile queries of one segment.
type qGroup struct {
	qs  []int
	seg backend.Segment
}

// groupQueries cuts queries, in the given order, into groups of at most qTile consecutive
// queries that share a segment of block (geom.Layout.SegmentOf: a window in a windowed block).
func (s *Store) groupQueries(block int, queries []int) []qGroup {
	var out []qGroup
	for i := 0; i < len(queries); {
		seg := s.Layout.SegmentOf(block, queries[i])
		j := i + 1
		for j < len(queries) && j-i < qTile && queries[j] >= seg.Start && queries[j] < seg.End {
			j++
		}
		out = append(out, qGroup{queries[i:j], seg})
		i = j
	}
	return out
}

// groupSegments is the segment of every group (with repeats).
func groupSegments(groups []qGroup) []backend.Segment {
	segs := make([]backend.Segment, len(groups))
	for i, g := range groups {
		segs[i] = g.seg
	}
	return segs
}

// segmentsIn is block's attention segments inside frame, in order: the frame itself, or the
// windows that tile it when block is windowed. A windowed block's attention over the frame is
// block-diagonal: zero between windows.
func (s *Store) segmentsIn(block int, frame backend.Segment) []backend.Segment {
	if !s.Layout.Windowed(block) {
		return []backend.Segment{frame}
	}
	var out []backend.Segment
	for _, w := range s.Layout.SegmentsOf(block) {
		if w.Start >= frame.Start && w.End <= frame.End {
			out = append(out, w)
		}
	}
	return out
}

// longestSegment is the longest frame: no segment of any block is longer.
func (s *Store) longestSegment() int {
	n := 0
	for _, s := range s.Layout.Segments {
		n = max(n, s.End-s.Start)
	}
	return n
}

// AttentionRows computes the attention row of every query of queries
// (one head of one block), several at a time on all cores, and hands each to fn. Calls of
// fn never overlap but come in no particular order; each row is a new slice the callee may
// keep. A done ctx stops the work; AttentionRows then returns ctx.Err() and some queries
// have not been seen. It needs q and k kept (Settings.Keep).
func (s *Store) AttentionRows(ctx context.Context, block, head int, queries []int, fn func(query int, row []float32)) error {
	for _, q := range queries {
		if err := s.checkQueryAt(block, q); err != nil {
			return err
		}
	}
	if head < 0 || head >= s.Heads {
		return fmt.Errorf("head %d outside %d heads", head, s.Heads)
	}
	if len(queries) == 1 { // one query: score it against the keys where they lie (onequery.go)
		row, err := s.queryRow(ctx, block, head, queries[0])
		if err == nil {
			fn(queries[0], row)
		}
		return err
	}
	groups := s.groupQueries(block, queries)
	ab, err := s.attnBlockHeads(block, []int{head}, groupSegments(groups)...)
	if err != nil {
		return err
	}
	workers := par.Workers(len(groups))
	scr := make([]*scratch, workers)
	S, longest := s.Layout.Rows(), s.longestSegment()
	var mu sync.Mutex
	return par.For(ctx, len(groups), workers, func(w, t int) {
		if scr[w] == nil {
			scr[w] = newScratch(longest)
		}
		sc, g := scr[w], groups[t]
		L := g.seg.End - g.seg.Start
		ab.scores(sc, head, g.qs, g.seg)
		for a, q := range g.qs {
			s := row(sc.s, a, L)
			z := softmaxExp(s)
			out := make([]float32, S)
			for j, e := range s {
				out[g.seg.Start+j] = float32(e / z)
			}
			mu.Lock()
			fn(q, out)
			mu.Unlock()
		}
	})
}

// AttentionRowMean is the mean over heads of AttentionRow(block, h, query): [S] in sequence
// order, zero outside the query's segment. It needs q and k kept (Settings.Keep). Every head's scores come
// from one pass over the keys (QueryRows); the mean is accumulated in float64 exactly as the
// batched head means (headMeans) do, so it has their bits.
func (s *Store) AttentionRowMean(block, query int) ([]float32, error) {
	_, mean, err := s.queryRows(context.Background(), block, query, false)
	return mean, err
}

// Rollout is the attention rollout (Abnar & Zuidema 2020) of one query from block 0 up to
// block upTo: row query of Â_upTo ... Â_1 Â_0, where Â_l = 0.5*mean_h A_l + 0.5*I with its
// rows renormalized to sum to 1. The result is [S] in sequence order: how much each patch of
// the query's segment flows into the query's output of block upTo. It sums to 1 and is zero
// outside the segment. Each block costs every row of its attention over the segment
// (O(L^2*D)), computed on the fly on all cores. It needs q and k kept (Settings.Keep) for blocks 0..upTo.
//
// opts (at most one; none: the mean, nothing discarded) picks another head fusion and a
// discard ratio, as vit-explain does (rollout.go): Â_l = rownorm(0.5*drop(fuse_h A_l) +
// 0.5*I), where drop zeroes the lowest entries of the fused L x L matrix but never its
// diagonal (see RolloutOptions).
func (s *Store) Rollout(ctx context.Context, query, upTo int, opts ...RolloutOptions) ([]float32, error) {
	var o RolloutOptions
	if len(opts) > 1 {
		return nil, fmt.Errorf("rollout: %d option sets, want at most one", len(opts))
	}
	if len(opts) == 1 {
		o = opts[0]
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := s.checkQuery(query); err != nil {
		return nil, err
	}
	if kept := s.KeptQK(); upTo < 0 || upTo >= kept {
		return nil, fmt.Errorf("rollout up to block %d: %d blocks have attention kept", upTo, kept)
	}
	seg := s.Layout.FrameOf(query) // what flows into the query over several blocks: its frame
	L := seg.End - seg.Start
	if o.dropCount(L) > 0 {
		if err := checkFusedSize(L); err != nil {
			return nil, err
		}
	}
	v := make([]float64, L)
	v[query-seg.Start] = 1
	out := make([]float64, L)
	var partials [][]float64 // reused across blocks
	var scr []*scratch
	for l := upTo; l >= 0; l-- {
		add, err := s.rolloutBlock(ctx, l, seg, o)
		if err != nil {
			return nil, err
		}
		var active []int
		for j, x := range v {
			if x != 0 {
				active = append(active, seg.Start+j)
			}
		}
		chunk := max(qTile, (len(active)+maxChunks-1)/maxChunks)
		chunk = (chunk + qTile - 1) / qTile * qTile
		nChunks := (len(active) + chunk - 1) / chunk
		for len(partials) < nChunks {
			partials = append(partials, make([]float64, L))
		}
		workers := par.Workers(nChunks)
		for len(scr) < workers {
			scr = append(scr, newScratch(L))
		}
		err = par.For(ctx, nChunks, workers, func(w, c int) {
			part := partials[c]
			clear(part)
			qs := active[c*chunk : min((c+1)*chunk, len(active))]
			for i := 0; i < len(qs); i += qTile {
				add(scr[w], qs[i:min(i+qTile, len(qs))], v, part)
			}
		})
		if err != nil {
			return nil, err
		}
		clear(out)
		for _, part := range partials[:nChunks] {
			for j, x := range part {
				out[j] += x
			}
		}
		v, out = out, v
	}
	res := make([]float32, s.Layout.Rows())
	for j, x := range v {
		res[seg.Start+j] = float32(x)
	}
	return res, nil
}

// rolloutBlock returns what adds v_i * Â_block[i, :] to part for a group of queries: the
// fused rows computed on the fly, or, when entries are discarded, read from the block's
// fused matrix with the lowest entries dropped (rollout.go).
func (s *Store) rolloutBlock(ctx context.Context, block int, seg backend.Segment, o RolloutOptions) (func(sc *scratch, qs []int, v, part []float64), error) {
	L := seg.End - seg.Start
	if k := o.dropCount(L); k > 0 {
		f, err := s.fusedMatrix(ctx, block, seg, -1, o.Fusion)
		if err != nil {
			return nil, err
		}
		d := newDropped(f, k)
		return func(sc *scratch, qs []int, v, part []float64) {
			for _, q := range qs {
				i := q - seg.Start
				m := row(sc.m, 0, L)
				d.row(i, L, m)
				addHatRow(m, i, v[i], part)
			}
		}, nil
	}
	segs := s.segmentsIn(block, seg)
	ab, err := s.attnBlock(block, segs...)
	if err != nil {
		return nil, err
	}
	return func(sc *scratch, qs []int, v, part []float64) {
		eachSegmentRun(segs, qs, func(w backend.Segment, run []int) { // one of block's segments at a time
			ab.fusedRows(sc, run, w, -1, o.Fusion)
			off, Lw := w.Start-seg.Start, w.End-w.Start
			for a, q := range run {
				i := q - w.Start
				addHatRow(row(sc.m, a, Lw), i, v[off+i], part[off:off+Lw])
			}
		})
	}, nil
}

// addHatRow adds vi * Â[i, :] to part, where m is row i of the fused (and dropped) attention
// and Â[i, :] = (0.5*m + 0.5*e_i) / (0.5*sum(m) + 0.5): the identity, then the
// renormalization.
func addHatRow(m []float64, i int, vi float64, part []float64) {
	var sum float64
	for _, x := range m {
		sum += x
	}
	w := vi / (0.5*sum + 0.5) // Â's row sum: the renormalization
	hw := 0.5 * w
	for j, x := range m {
		part[j] += hw * x
	}
	part[i] += hw
}

// EvenQueries returns at most max query indices spread evenly over [0, n): the centre of
// each of max equal slices, in increasing order, all of them when max <= 0 or max >= n.
func EvenQueries(n, max int) []int {
	if max <= 0 || max >= n {
		max = n
	}
	out := make([]int, max)
	for k := range out {
		out[k] = (2*k + 1) * n / (2 * max)
	}
	return out
}

// HeadStats returns, for every head of one block, the mean attention distance (in patches:
// the Euclidean distance between (row, col) positions within the frame, weighted by
// attention, averaged over queries) and the mean attention entropy (nats, averaged over
// queries). At most maxQueries queries are used, spread evenly by EvenQueries (all of them
// when maxQueries <= 0). It needs q and k kept (Settings.Keep).
func (s *Store) HeadStats(ctx context.Context, block, maxQueries int) (dist, entropy []float64, err error) {
	var qs []int
	for _, q := range EvenQueries(s.Layout.Rows(), maxQueries) {
		if !s.droppedAt(block, q) { // a dropped row is no query of the block
			qs = append(qs, q)
		}
	}
	groups := s.groupQueries(block, qs)
	ab, err := s.attnBlock(block, groupSegments(groups)...)
	if err != nil {
		return nil, nil, err
	}
	// per (query k, head h) results at k*H+h, summed in order at the end: deterministic.
	H := ab.heads
	dq, eq := make([]float64, len(qs)*H), make([]float64, len(qs)*H)
	first := make([]int, len(groups)) // index in qs of each group's first query
	for g := 1; g < len(groups); g++ {
		first[g] = first[g-1] + len(groups[g-1].qs)
	}
	workers := par.Workers(len(groups))
	scr := make([]*scratch, workers)
	longest := s.longestSegment()
	pos := s.Layout.Pos
	err = par.For(ctx, len(groups), workers, func(w, t int) {
		if scr[w] == nil {
			scr[w] = newScratch(longest)
		}
		sc, g := scr[w], groups[t]
		L := g.seg.End - g.seg.Start
		keys := pos[g.seg.Start:g.seg.End]
		for a, q := range g.qs { // distances to the keys, shared by the heads: rows of sc.m
			pq := pos[q]
			dist := row(sc.m, a, L)
			for j, kp := range keys {
				dr, dc := float64(pq.Row-kp.Row), float64(pq.Col-kp.Col)
				dist[j] = math.Sqrt(dr*dr + dc*dc)
			}
		}
		for h := range H {
			ab.scores(sc, h, g.qs, g.seg)
			for a := range g.qs {
				s := row(sc.s, a, L)
				mx := math.Inf(-1)
				for _, x := range s {
					if x > mx {
						mx = x
					}
				}
				dist := row(sc.m, a, L)[:len(s)]
				var z, et, ed float64
				for j, x := range s {
					if math.IsInf(x, -1) { // a masked key: p = 0, and 0 * -inf would be NaN
						continue
					}
					u := x - mx
					e := expNonPos(u)
					z += e
					et += e * u
					ed += e * dist[j]
				}
				k := first[t] + a
				// p_j = e_j/z, log p_j = u_j - log z: entropy = log z - sum(e_j u_j)/z.
				dq[k*H+h], eq[k*H+h] = ed/z, math.Log(z)-et/z
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	dist, entropy = make([]float64, H), make([]float64, H)
	for k := range qs {
		for h := range H {
			dist[h] += dq[k*H+h]
			entropy[h] += eq[k*H+h]
		}
	}
	for h := range H {
		dist[h] /= float64(len(qs))
		entropy[h] /= float64(len(qs))
	}
	return dist, entropy, nil
}

// TopK returns the indices of the k largest values of row, largest first, ties broken by
// the lower index; NaN ranks below every number. Fewer than k when row is shorter. A small
// k (a top-k list, the marks of a hover) takes one pass keeping the best k seen, in the
// same order a full sort gives.
func TopK(row []float32, k int) []int {
	k = min(k, len(row))
	if k <= 0 {
		return nil
	}
	// before says whether index a ranks before index b.
	before := func(a, b int) bool {
		va, vb := row[a], row[b]
		na, nb := va != va, vb != vb
		switch {
		case na != nb:
			return nb
		case !na && va != vb:
			return va > vb
		}
		return a < b
	}
	if k*16 <= len(row) {
		best := make([]int, 0, k)
		for i := range row {
			if len(best) == k && !before(i, best[k-1]) {
				continue
			}
			j := len(best)
			if j < k {
				best = append(best, i)
			} else {
				j = k - 1
			}
			for ; j > 0 && before(i, best[j-1]); j-- {
				best[j] = best[j-1]
			}
			best[j] = i
		}
		return best
	}
	idx := make([]int, len(row))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	return idx[:k:k]
}

// eachSegmentRun cuts queries qs (increasing) into runs that share one of segs (in order,
// covering every query) and calls fn with each segment and its run.
func eachSegmentRun(segs []backend.Segment, qs []int, fn func(w backend.Segment, run []int)) {
	for len(qs) > 0 {
		w := geom.SegmentHolding(segs, qs[0])
		n := 1
		for n < len(qs) && qs[n] < w.End {
			n++
		}
		fn(w, qs[:n])
		qs = qs[n:]
	}
}
