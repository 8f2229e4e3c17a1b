package probe

// onequery_internal_test.go holds the one-query paths (onequery.go) to the batched ones bit
// for bit, on a random store with two segments and 20 heads (two strips of 16 lanes, the
// second one short), under both score kernels.
//
// Invariant: QueryRows' rows are AttentionRows' rows of the same query in a batch, and its
// mean the batched headMeans, bit for bit. The mutations it catches: a query strip packed at
// another head's dimensions or lane, a short last strip read past its heads, keys read from
// the q half, and a mean summed in another order (1/H applied per head).

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// randomStore is a store of blocks blocks of random q|k over grids, heads x hd.
func randomStore(t testing.TB, heads, hd, blocks int, grids ...geom.Grid) *Store {
	t.Helper()
	lay, err := geom.NewLayout(2, grids)
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore(lay, heads, hd)
	rng := rand.New(rand.NewPCG(uint64(heads), uint64(hd)))
	for range blocks {
		qk := make([]float32, lay.Rows()*2*s.Hidden)
		for i := range qk {
			qk[i] = float32(rng.NormFloat64() * 1.5)
		}
		s.AddQK(qk)
	}
	return s
}

func bitEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestQueryRowsBitEqualBatch(t *testing.T) {
	s := randomStore(t, 20, 12, 1, geom.Grid{T: 1, H: 8, W: 10}, geom.Grid{T: 1, H: 6, W: 6})
	S := s.Layout.Rows()
	ctx := context.Background()
	kernel.EachKernel(func(name string) {
		for _, q := range []int{0, 41, 79, 80, 97, S - 1} {
			rows, mean, err := s.QueryRows(ctx, 0, q)
			if err != nil {
				t.Fatal(err)
			}
			seg := s.Layout.SegmentOf(0, q)
			other := seg.Start + (q-seg.Start+7)%(seg.End-seg.Start) // a batch of two: the packed path
			for h := range s.Heads {
				var batch []float32
				err := s.AttentionRows(ctx, 0, h, []int{q, other}, func(qq int, r []float32) {
					if qq == q {
						batch = r
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if !bitEqual(rows[h], batch) {
					t.Fatalf("%s: query %d head %d: the one-query row differs from the batched one", name, q, h)
				}
				one, err := s.AttentionRow(0, h, q)
				if err != nil || !bitEqual(one, batch) {
					t.Fatalf("%s: query %d head %d: AttentionRow differs from the batched row (%v)", name, q, h, err)
				}
			}
			ab, err := s.attnBlock(0, seg)
			if err != nil {
				t.Fatal(err)
			}
			L := seg.End - seg.Start
			sc := newScratch(L)
			ab.headMeans(sc, []int{q, other}, seg)
			want := make([]float32, S)
			for j, m := range row(sc.m, 0, L) {
				want[seg.Start+j] = float32(m)
			}
			if !bitEqual(mean, want) {
				t.Fatalf("%s: query %d: the one-pass mean differs from headMeans", name, q)
			}
			if m2, err := s.AttentionRowMean(0, q); err != nil || !bitEqual(m2, want) {
				t.Fatalf("%s: query %d: AttentionRowMean differs from headMeans (%v)", name, q, err)
			}
		}
	})
	if _, _, err := s.QueryRows(ctx, 1, 0); err == nil {
		t.Error("block 1 of 1 gave rows")
	}
	if _, _, err := s.QueryRows(ctx, 0, S); err == nil {
		t.Error("a query past the page gave rows")
	}
}

// TopK's one-pass path (small k) ranks exactly as its full sort: on long rows with ties and
// NaNs, against the full-sort path (k = len).
func TestTopKOnePassMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for range 200 {
		row := make([]float32, 16+rng.IntN(500))
		for i := range row {
			row[i] = float32(rng.IntN(12))
			if rng.IntN(20) == 0 {
				row[i] = float32(math.NaN())
			}
		}
		all := TopK(row, len(row))
		for _, k := range []int{1, 2, 5, 8, len(row) / 16} {
			if got := TopK(row, k); !slicesEqual(got, all[:k]) {
				t.Fatalf("k %d: %v, the sort gives %v", k, got, all[:k])
			}
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
