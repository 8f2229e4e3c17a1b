package probe_test

// reverse_test.go holds the column and the pooled matrix (reverse.go) to the full reference
// matrices of the fixture (176 patches in four segments).
//
// Invariant: AttentionColumn(key)[q] = A[q, key] over key's segment, zero elsewhere, and a
// pooled cell is the largest entry of its rows and columns. The mutations it catches: the
// row instead of the column (the transpose), a column renormalized to sum to 1, a mean pool
// instead of a max, rows and columns swapped in the pooling, a region shifted by one.

import (
	"context"
	"math"
	"testing"

	"github.com/turbospark/inspector/engine/probe"
)

func TestAttentionColumnIsTheColumn(t *testing.T) {
	run, _ := analysisRun(t)
	S := run.Layout.Rows()
	ctx := context.Background()
	forEachScoreKernel(t, func(t *testing.T) {
		for _, head := range []int{2, -1} {
			var full []float64
			if head >= 0 {
				full = headMatrix(t, run, 1, head)
			} else {
				full = meanMatrix(t, run, 1)
			}
			for _, key := range []int{0, 50, 131, S - 1} {
				got, err := run.Probes.AttentionColumn(ctx, 1, head, key)
				must(t, err)
				seg := run.Layout.SegmentOf(1, key)
				want := make([]float64, S)
				for q := seg.Start; q < seg.End; q++ {
					want[q] = full[q*S+key]
				}
				if d := maxDiff64(got, want); d > 1e-6 {
					t.Errorf("head %d, key %d: column off by %.2e", head, key, d)
				}
				row := full[key*S : (key+1)*S]
				if d := maxDiff64(got, row); d < 1e-4 {
					t.Errorf("head %d, key %d: the column is the key's row", head, key)
				}
				var sum float64
				for _, x := range got {
					sum += float64(x)
				}
				if math.Abs(sum-1) < 1e-4 {
					t.Errorf("head %d, key %d: the column sums to 1 (%v): renormalized?", head, key, sum)
				}
			}
		}
	})
	if _, err := run.Probes.AttentionColumn(ctx, 1, 4, 0); err == nil {
		t.Error("head 4 of 4 gave a column")
	}
	if _, err := run.Probes.AttentionColumn(ctx, 1, 0, S); err == nil {
		t.Error("a key past the page gave a column")
	}
}

// poolRef max-pools region g of the L x L matrix m (segment-local) with the given steps.
func poolRef(m []float64, L int, g probe.MatrixRegion, rs, cs int) (rows, cols int, vals []float64) {
	rows, cols = (g.Row1-g.Row0+rs-1)/rs, (g.Col1-g.Col0+cs-1)/cs
	vals = make([]float64, rows*cols)
	for i := range vals {
		vals[i] = math.Inf(-1)
	}
	for i := g.Row0; i < g.Row1; i++ {
		for j := g.Col0; j < g.Col1; j++ {
			c := (i-g.Row0)/rs*cols + (j-g.Col0)/cs
			vals[c] = math.Max(vals[c], m[i*L+j])
		}
	}
	return rows, cols, vals
}

func TestAttentionMatrixPooled(t *testing.T) {
	run, _ := analysisRun(t)
	S := run.Layout.Rows()
	ctx := context.Background()
	seg := run.Layout.Segments[0]
	for _, g := range run.Layout.Segments { // the longest: room for a region inside
		if g.End-g.Start > seg.End-seg.Start {
			seg = g
		}
	}
	L := seg.End - seg.Start
	if L < 30 {
		t.Fatalf("longest segment %d patches", L)
	}
	for _, head := range []int{1, -1} {
		var full []float64
		if head >= 0 {
			full = headMatrix(t, run, 2, head)
		} else {
			full = meanMatrix(t, run, 2)
		}
		m := segmentBlock(full, S, seg)
		for _, c := range []struct {
			g    probe.MatrixRegion
			side int
		}{{probe.Whole(L), L}, {probe.Whole(L), 7}, {probe.MatrixRegion{Row0: 3, Row1: 29, Col0: 10, Col1: 21}, 5}, {probe.MatrixRegion{Row0: 0, Row1: 4, Col0: 1, Col1: L}, 100}} {
			got, err := run.Probes.AttentionMatrix(ctx, 2, head, seg, c.g, c.side)
			must(t, err)
			rs, cs := max(1, (c.g.Row1-c.g.Row0+c.side-1)/c.side), max(1, (c.g.Col1-c.g.Col0+c.side-1)/c.side)
			rows, cols, want := poolRef(m, L, c.g, rs, cs)
			if got.Rows != rows || got.Cols != cols || got.RowStep != rs || got.ColStep != cs || got.Rows > c.side || got.Cols > c.side {
				t.Fatalf("head %d %+v side %d: %dx%d cells of %dx%d, want %dx%d of %dx%d", head, c.g, c.side, got.Rows, got.Cols, got.RowStep, got.ColStep, rows, cols, rs, cs)
			}
			if d := maxDiff64(got.Vals, want); d > 1e-6 {
				t.Errorf("head %d %+v side %d: pooled cells off by %.2e", head, c.g, c.side, d)
			}
			if got.Pooled() != (rs > 1 || cs > 1) {
				t.Errorf("Pooled() = %v with steps %d, %d", got.Pooled(), rs, cs)
			}
			// every entry of the region falls in the cell CellRegion says
			for i := c.g.Row0; i < c.g.Row1; i += 3 {
				for j := c.g.Col0; j < c.g.Col1; j += 2 {
					r, cc := got.CellOf(i, j)
					cr := got.CellRegion(r, cc)
					if i < cr.Row0 || i >= cr.Row1 || j < cr.Col0 || j >= cr.Col1 {
						t.Fatalf("entry (%d, %d) in cell (%d, %d) = %+v", i, j, r, cc, cr)
					}
				}
			}
		}
	}
	for _, bad := range []probe.MatrixRegion{{0, L + 1, 0, L}, {5, 5, 0, L}, {-1, 3, 0, 3}} {
		if _, err := run.Probes.AttentionMatrix(ctx, 2, 0, seg, bad, 10); err == nil {
			t.Errorf("region %+v accepted", bad)
		}
	}
}
