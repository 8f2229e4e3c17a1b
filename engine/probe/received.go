package probe

// received.go: the attention each patch receives in one block — the sum over the queries of
// its segment of the head-mean attention row's entry for it (so each segment hands out its
// own length in total, one per query, and a patch receives 1 on average whatever the size of
// its image) — what token dropping ranks patches by (engine/intervene/tokendrop.go), and the rows a
// run dropped, which the probes of the later blocks leave out.
//
// Invariant: the sum runs over query groups in a fixed order into a fixed number of partial
// vectors (maxChunks), added in order at the end: the same bits for any GOMAXPROCS. A key the
// run masked or dropped (Store.Views) receives 0.
// Mutation that would silently break it: summing over the keys of a query's row (every
// patch would receive exactly 1 and the ranking would be the order of the rows).

import (
	"context"
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// Received is, per row ([S], float64), the attention the row's patch receives in block: the sum
// over every query of its segment of mean_h A_h[query, row]. It needs the block's q|k kept.
func (s *Store) Received(ctx context.Context, block int) ([]float64, error) {
	qk, err := s.QK(block)
	if err != nil {
		return nil, err
	}
	return s.ReceivedOf(ctx, block, qk)
}

// ReceivedOf is Received from block's q|k rows given here ([S, 2D]: a run that does not keep
// them hands the one block's over), with the store's layout and masks.
func (s *Store) ReceivedOf(ctx context.Context, block int, qk []float32) ([]float64, error) {
	S, D := s.Layout.Rows(), s.Hidden
	if len(qk) != S*2*D {
		return nil, fmt.Errorf("received: q|k of %d values, want %d rows of %d", len(qk), S, 2*D)
	}
	var queries []int
	for q := range S {
		if !s.droppedAt(block, q) {
			queries = append(queries, q)
		}
	}
	ab := attnBlock{qk: qk, d: D, hd: s.HeadDim, heads: s.Heads, scale: s.attnScale(), masked: s.maskedKeys(block),
		dropped: s.droppedBefore(block)}
	if kernel.UseAVX512 {
		return ab.receivedCols(ctx, s.Layout.SegmentsOf(block), S)
	}
	return s.receivedRows(ctx, ab, block, queries)
}

// receivedRows is ReceivedOf on the float64 rows of headMeans, qTile queries a group.
func (s *Store) receivedRows(ctx context.Context, ab attnBlock, block int, queries []int) ([]float64, error) {
	S := s.Layout.Rows()
	groups := s.groupQueries(block, queries)
	ab.packIfFMA(groupSegments(groups))
	chunk := max(1, (len(groups)+maxChunks-1)/maxChunks)
	nChunks := (len(groups) + chunk - 1) / chunk
	partials := make([][]float64, nChunks)
	longest := s.longestSegment()
	scr := make([]*scratch, par.Workers(nChunks))
	err := par.For(ctx, nChunks, len(scr), func(w, c int) {
		if scr[w] == nil {
			scr[w] = newScratch(longest)
		}
		part := make([]float64, S)
		for _, g := range groups[c*chunk : min((c+1)*chunk, len(groups))] {
			ab.headMeans(scr[w], g.qs, g.seg)
			addColumns(scr[w], len(g.qs), g.seg, part)
		}
		partials[c] = part
	})
	if err != nil {
		return nil, err
	}
	out := make([]float64, S)
	for _, part := range partials {
		for j, x := range part {
			out[j] += x
		}
	}
	return out, nil
}

// receivedCols is ReceivedOf on the AVX-512 column path (rolloutcols.go: 32 queries in the
// lanes, float32 scores, exp and head mean, each key's lane sums added in float64): the
// tiles of every segment in a fixed order, one partial vector per tile, added in order.
func (ab *attnBlock) receivedCols(ctx context.Context, segs []backend.Segment, S int) ([]float64, error) {
	type tile struct {
		seg    backend.Segment
		q0, nq int
		keys   int // index into keys
	}
	var tiles []tile
	var keys [][]float32
	longest := 0
	for _, seg := range segs {
		if seg.Len() == 0 {
			continue
		}
		keys = append(keys, ab.colKeys(seg, 0))
		longest = max(longest, seg.Len())
		for q := seg.Start; q < seg.End; q += colLanes {
			tiles = append(tiles, tile{seg, q, min(colLanes, seg.End-q), len(keys) - 1})
		}
	}
	partials := make([][]float64, len(tiles))
	scr := make([]*colScratch, par.Workers(len(tiles)))
	err := par.For(ctx, len(tiles), len(scr), func(w, i int) {
		if scr[w] == nil {
			scr[w] = newColScratch(longest, ab.hd)
		}
		t := tiles[i]
		ab.fusedCols(scr[w], t.seg, keys[t.keys], t.q0, t.nq, FuseMean)
		part := make([]float64, t.seg.Len()) // the tile's column sums over its nq lanes
		acc := scr[w].acc
		for j := range part {
			for c := range t.nq {
				part[j] += float64(acc[j*colLanes+c])
			}
		}
		partials[i] = part
	})
	if err != nil {
		return nil, err
	}
	out := make([]float64, S)
	for i, t := range tiles {
		for j, x := range partials[i] {
			out[t.seg.Start+j] += x
		}
	}
	return out, nil
}

// addColumns adds the n head-mean rows in sc.m (over seg) into part, at their keys' rows.
func addColumns(sc *scratch, n int, seg backend.Segment, part []float64) {
	L := seg.Len()
	dst := part[seg.Start:seg.End]
	for a := range n {
		for j, x := range row(sc.m, a, L) {
			dst[j] += x
		}
	}
}

// Dropped says whether row was dropped before block ran (token dropping).
func (s *Store) Dropped(block, row int) bool { return s.droppedAt(block, row) }

func (s *Store) droppedAt(block, row int) bool {
	d := s.droppedBefore(block)
	return d != nil && d[row]
}

// droppedBefore is the rows dropped before block ran (nil: none).
func (s *Store) droppedBefore(block int) []bool { return s.view(block).Dropped }

// checkQueryAt is checkQuery, and refuses a query its block no longer had.
func (s *Store) checkQueryAt(block, q int) error {
	if err := s.checkQuery(q); err != nil {
		return err
	}
	if d := s.droppedBefore(block); d != nil && d[q] {
		after, _ := s.Views.DropAfter()
		return fmt.Errorf("patch %d was dropped after block %d: block %d did not run it", s.Layout.ProcessorRow(q), after, block)
	}
	return nil
}
