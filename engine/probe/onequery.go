package probe

// onequery.go: the attention rows of ONE query — one head's, or every head's and their mean
// — scored in one pass over the keys where they lie in the kept q|k, without packing them.
// This is what a click or a hover costs: packing the keys of 5,120 patches x 16 heads would
// cost more than scoring one query against them.
//
// With kernel.UseFMA the query is packed instead, block-diagonally: lane c of the 16-lane
// strip holds head c's query over head c's dimensions and zeros elsewhere, and the six x
// rows of a kernel.FMA6x16 call are six keys' full k (heads h0..h0+15, contiguous in the row).
// Lane c then runs fma(k_x, 0, acc) from +0 over the other heads' dimensions — which leaves
// +0, and leaves any sum unchanged (x + ±0 = x) — and the one float32 chain over head c's
// dimensions in index order from +0 between them: the bits of the packed-keys path
// (attention.go, Scores). Without FMA, kernel.Dot3x2 scores three keys against the query
// (x and w swapped, float32(a*b) = float32(b*a)): the bits of the generic path.
//
// Invariant: every row here has the bits AttentionRows gives the same query in a batch, and
// the mean the bits of headMeans. The mutation that would silently break it: a query strip
// whose lane c holds head c's query at another head's dimensions (an off-by-one head offset
// between x and w): every row is still a softmax over the segment, of the wrong scores.
// (A key with a NaN or an infinity in any head makes that key's score NaN in every head of
// its group of 16 here, where the packed path would confine it to the head it is in; post-rope
// q and k of a real run are finite.)

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// laneHeads is the number of heads one query strip serves: the kernel's 16 lanes.
const laneHeads = keyStrip

// oneQueryKeys is the number of keys one task scores (a multiple of qTile).
const oneQueryKeys = 16 * qTile

// queryScores fills dst[i*L + j] with q_query . k_j * scale for head heads[i] (heads
// consecutive, heads[i] = h0+i) and every key j of seg (L keys).
func (ab *attnBlock) queryScores(ctx context.Context, query int, seg backend.Segment, h0, nh int, dst []float64) error {
	L := seg.End - seg.Start
	tasks := (L + oneQueryKeys - 1) / oneQueryKeys
	groups := (nh + laneHeads - 1) / laneHeads
	var strips [][]float32
	if kernel.UseFMA {
		strips = make([][]float32, groups)
		for g := range strips {
			strips[g] = ab.queryStrip(query, h0+g*laneHeads, min(laneHeads, nh-g*laneHeads))
		}
	}
	err := par.For(ctx, tasks*groups, par.Workers(tasks*groups), func(_, t int) {
		g, j0 := t/tasks, t%tasks*oneQueryKeys
		gh := min(laneHeads, nh-g*laneHeads)
		out := dst[g*laneHeads*L:]
		keys := backend.Segment{Start: seg.Start + j0, End: seg.Start + min(L, j0+oneQueryKeys)}
		if strips != nil {
			ab.scoreStrip(strips[g], h0+g*laneHeads, gh, keys, out[j0:], L)
		} else {
			for i := range gh {
				ab.scoreGeneric(query, h0+g*laneHeads+i, keys, out[i*L+j0:])
			}
		}
	})
	for i := range nh {
		ab.dropMasked(dst[i*L:][:L], seg.Start)
	}
	return err
}

// queryStrip packs query's heads h0..h0+gh-1 block-diagonally: w[x*16 + x/hd] =
// q[h0*hd + x] for x < gh*hd, every other lane 0.
func (ab *attnBlock) queryStrip(query, h0, gh int) []float32 {
	hd := ab.hd
	n := gh * hd
	w := make([]float32, n*laneHeads)
	q := ab.qk[query*2*ab.d+h0*hd:][:n]
	for x, v := range q {
		w[x*laneHeads+x/hd] = v
	}
	return w
}

// scoreStrip scores the keys of keys (absolute rows) against a query strip of gh heads from
// h0: out[c*L + j] for head h0+c and the j-th key of keys.
func (ab *attnBlock) scoreStrip(w []float32, h0, gh int, keys backend.Segment, out []float64, L int) {
	n, D := gh*ab.hd, ab.d
	var y [qTile][laneHeads]float32
	var xp, yp [qTile]unsafe.Pointer
	for t := range qTile {
		yp[t] = unsafe.Pointer(&y[t])
	}
	wp := f32Ptr(w, 0, n*laneHeads)
	K := keys.End - keys.Start
	for j := 0; j < K; j += qTile {
		for t := range qTile {
			xp[t] = f32Ptr(ab.qk, (keys.Start+min(j+t, K-1))*2*D+D+h0*ab.hd, n)
		}
		kernel.FMA6x16(&xp, wp, n, &yp, 0)
		for t := range min(qTile, K-j) {
			for c := range gh {
				out[c*L+j+t] = float64(y[t][c]) * ab.scale
			}
		}
	}
}

// scoreGeneric scores the keys of keys against query's head h with kernel.Dot3x2, three keys
// a call: out[j] for the j-th key of keys.
func (ab *attnBlock) scoreGeneric(query, h int, keys backend.Segment, out []float64) {
	hd, D := ab.hd, ab.d
	qp := f32Ptr(ab.qk, query*2*D+h*hd, hd)
	K := keys.End - keys.Start
	key := func(j int) unsafe.Pointer { return f32Ptr(ab.qk, (keys.Start+min(j, K-1))*2*D+D+h*hd, hd) }
	for j := 0; j < K; j += 3 {
		var acc [6]float32
		kernel.Dot3x2(key(j), key(j+1), key(j+2), qp, qp, hd, &acc)
		for a := range min(3, K-j) {
			out[j+a] = float64(acc[2*a]) * ab.scale
		}
	}
}

// queryRow is one head's attention row of query: AttentionRows' row, from one pass.
func (s *Store) queryRow(ctx context.Context, block, head, query int) ([]float32, error) {
	if err := s.checkQueryAt(block, query); err != nil {
		return nil, err
	}
	ab, err := s.attnBlockBare(block)
	if err != nil {
		return nil, err
	}
	seg := s.Layout.SegmentOf(block, query)
	L := seg.End - seg.Start
	sc := make([]float64, L)
	if err := ab.queryScores(ctx, query, seg, head, 1, sc); err != nil {
		return nil, err
	}
	out := make([]float32, s.Layout.Rows())
	z := softmaxExp(sc)
	for j, e := range sc {
		out[seg.Start+j] = float32(e / z)
	}
	return out, nil
}

// QueryRows is every head's attention row of query in block (rows[h] = AttentionRow(block,
// h, query), bit for bit) and their mean (AttentionRowMean, bit for bit), scored in one pass
// over the keys. Each is [S] in sequence order, zero outside the query's segment. It needs
// q and k kept (Settings.Keep).
func (s *Store) QueryRows(ctx context.Context, block, query int) (rows [][]float32, mean []float32, err error) {
	return s.queryRows(ctx, block, query, true)
}

// queryRows is QueryRows; withRows false leaves rows nil (the mean alone).
func (s *Store) queryRows(ctx context.Context, block, query int, withRows bool) ([][]float32, []float32, error) {
	if err := s.checkQueryAt(block, query); err != nil {
		return nil, nil, err
	}
	ab, err := s.attnBlockBare(block)
	if err != nil {
		return nil, nil, err
	}
	seg := s.Layout.SegmentOf(block, query)
	L, H, S := seg.End-seg.Start, ab.heads, s.Layout.Rows()
	sc := make([]float64, H*L)
	if err := ab.queryScores(ctx, query, seg, 0, H, sc); err != nil {
		return nil, nil, err
	}
	var rows [][]float32
	if withRows {
		rows = make([][]float32, H)
	}
	// Softmax per head on all cores; the head mean then sums the heads in order (headMeans'
	// order: m += e * (1/z) per head, then * (1/H)), so its bits do not depend on the cores.
	inv := make([]float64, H)
	par.Do(H, par.Workers(H), func(_, h int) {
		e := sc[h*L:][:L]
		z := softmaxExp(e)
		inv[h] = 1 / z
		if withRows {
			r := make([]float32, S)
			for j, x := range e {
				r[seg.Start+j] = float32(x / z)
			}
			rows[h] = r
		}
	})
	m := make([]float64, L)
	for h := range H {
		for j, e := range sc[h*L:][:L] {
			m[j] += e * inv[h]
		}
	}
	invH := 1 / float64(H)
	mean := make([]float32, S)
	for j, x := range m {
		mean[seg.Start+j] = float32(x * invH)
	}
	return rows, mean, nil
}

// checkHead reports a head outside the tower.
func (s *Store) checkHead(head int) error {
	if head < 0 || head >= s.Heads {
		return fmt.Errorf("head %d outside %d heads", head, s.Heads)
	}
	return nil
}
