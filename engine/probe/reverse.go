package probe

// reverse.go: the attention matrix read the other way and whole — the column of one key (which
// patches attend TO it: A[q, key] for every query q of its segment) and the matrix of a block
// and head over one segment, max-pooled to a size a screen can show, any region of it (zoom).
// Both need every row of the segment (each row's softmax normalizer is over all its keys), so
// they cost O(L^2 * head_dim) per head, scored on all cores a qTile of queries at a time; no
// L x L matrix is held.
//
// Invariant: AttentionColumn(key)[q] is entry key of q's row (the row normalized over q's
// keys), not entry q of key's row and not a column renormalized to sum to 1; and a pooled
// cell holds the largest entry of exactly its rows and columns. The mutation that would
// silently break it: returning key's row (the transpose): on a page whose attention is near
// symmetric it looks right, and it is another quantity.

import (
	"context"
	"fmt"
	"math"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/internal/par"
)

// AttentionColumn is how much every patch attends to key in block: out[q] = A[q, key] for
// every query q of key's segment (zero elsewhere), with A head's attention for head >= 0,
// else the mean over heads. [S] in sequence order. It needs q and k kept (Settings.Keep).
func (s *Store) AttentionColumn(ctx context.Context, block, head, key int) ([]float32, error) {
	if err := s.checkQuery(key); err != nil {
		return nil, err
	}
	seg := s.Layout.SegmentOf(block, key)
	out := make([]float32, s.Layout.Rows())
	err := s.segmentRows(ctx, block, head, seg, 0, seg.End-seg.Start, func(q int, row []float64) {
		out[q] = float32(row[key-seg.Start])
	})
	return out, err
}

// segmentRows computes the rows of the queries seg.Start+r0 .. seg.Start+r1-1 over seg (head's,
// or the mean of heads for head < 0) and hands each to fn (on any worker; calls for
// different queries may overlap; the row is scratch, valid during the call).
func (s *Store) segmentRows(ctx context.Context, block, head int, seg backend.Segment, r0, r1 int, fn func(q int, row []float64)) error {
	if head >= s.Heads {
		return s.checkHead(head)
	}
	var heads []int
	if head >= 0 {
		heads = []int{head}
	}
	ab, err := s.attnBlockHeads(block, heads, seg)
	if err != nil {
		return err
	}
	L := seg.End - seg.Start
	tasks := (r1 - r0 + qTile - 1) / qTile
	workers := par.Workers(tasks)
	scr := make([]*scratch, workers)
	return par.For(ctx, tasks, workers, func(w, t int) {
		if scr[w] == nil {
			scr[w] = newScratch(L)
		}
		qs := make([]int, 0, qTile)
		for i := r0 + t*qTile; i < min(r1, r0+(t+1)*qTile); i++ {
			qs = append(qs, seg.Start+i)
		}
		ab.fusedRows(scr[w], qs, seg, head, FuseMean)
		for a, q := range qs {
			fn(q, row(scr[w].m, a, L))
		}
	})
}

// MatrixRegion is a rectangle of a segment's attention matrix, segment-local and half-open:
// query rows [Row0, Row1), key columns [Col0, Col1).
type MatrixRegion struct{ Row0, Row1, Col0, Col1 int }

// Whole is the region of the whole matrix of a segment of L patches.
func Whole(L int) MatrixRegion { return MatrixRegion{0, L, 0, L} }

// PooledMatrix is a region of a block's attention matrix over one segment, max-pooled: cell
// (r, c) holds the largest entry of query rows Region.Row0 + r*RowStep ... (RowStep of them,
// fewer in the last cell) and key columns Region.Col0 + c*ColStep ... likewise.
type PooledMatrix struct {
	Segment          backend.Segment
	Region           MatrixRegion
	Rows, Cols       int // cells
	RowStep, ColStep int // matrix rows (columns) per cell: 1 when nothing is pooled
	Vals             []float32
}

// Pooled says whether cells hold more than one entry.
func (m *PooledMatrix) Pooled() bool { return m.RowStep > 1 || m.ColStep > 1 }

// CellOf is the cell holding segment-local entry (i, j), or (-1, -1) outside the region.
func (m *PooledMatrix) CellOf(i, j int) (r, c int) {
	g := m.Region
	if i < g.Row0 || i >= g.Row1 || j < g.Col0 || j >= g.Col1 {
		return -1, -1
	}
	return (i - g.Row0) / m.RowStep, (j - g.Col0) / m.ColStep
}

// CellRegion is the entries cell (r, c) pools.
func (m *PooledMatrix) CellRegion(r, c int) MatrixRegion {
	g := m.Region
	return MatrixRegion{g.Row0 + r*m.RowStep, min(g.Row1, g.Row0+(r+1)*m.RowStep),
		g.Col0 + c*m.ColStep, min(g.Col1, g.Col0+(c+1)*m.ColStep)}
}

// poolStep is the entries per cell that fit n entries in at most side cells.
func poolStep(n, side int) int { return max(1, (n+side-1)/side) }

// AttentionMatrix is region of block's attention over seg (head's for head >= 0, else the
// mean over heads), max-pooled into at most side x side cells. It needs q and k kept (Settings.Keep).
func (s *Store) AttentionMatrix(ctx context.Context, block, head int, seg backend.Segment, region MatrixRegion, side int) (*PooledMatrix, error) {
	if err := s.checkSegment(block, seg); err != nil {
		return nil, err
	}
	L := seg.End - seg.Start
	g := region
	if g.Row0 < 0 || g.Col0 < 0 || g.Row1 > L || g.Col1 > L || g.Row0 >= g.Row1 || g.Col0 >= g.Col1 {
		return nil, fmt.Errorf("region rows [%d, %d) x columns [%d, %d) is not inside a %d x %d matrix", g.Row0, g.Row1, g.Col0, g.Col1, L, L)
	}
	if side < 1 {
		return nil, fmt.Errorf("pooled side %d: want at least 1", side)
	}
	m := &PooledMatrix{Segment: seg, Region: g,
		RowStep: poolStep(g.Row1-g.Row0, side), ColStep: poolStep(g.Col1-g.Col0, side)}
	m.Rows = (g.Row1 - g.Row0 + m.RowStep - 1) / m.RowStep
	m.Cols = (g.Col1 - g.Col0 + m.ColStep - 1) / m.ColStep
	// Each row pooled over columns first (rows are independent: any worker), then the rows of
	// a cell in order: the result does not depend on scheduling (max is exact anyway).
	byRow := make([]float32, (g.Row1-g.Row0)*m.Cols)
	err := s.segmentRows(ctx, block, head, seg, g.Row0, g.Row1, func(q int, row []float64) {
		dst := byRow[(q-seg.Start-g.Row0)*m.Cols:][:m.Cols]
		for c := range dst {
			best := math.Inf(-1)
			for _, x := range row[g.Col0+c*m.ColStep : min(g.Col1, g.Col0+(c+1)*m.ColStep)] {
				best = max(best, x)
			}
			dst[c] = float32(best)
		}
	})
	if err != nil {
		return nil, err
	}
	m.Vals = make([]float32, m.Rows*m.Cols)
	for i := range g.Row1 - g.Row0 {
		dst := m.Vals[i/m.RowStep*m.Cols:][:m.Cols]
		for c, x := range byRow[i*m.Cols:][:m.Cols] {
			if i%m.RowStep == 0 || x > dst[c] {
				dst[c] = x
			}
		}
	}
	return m, nil
}
