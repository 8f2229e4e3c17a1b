package probe

// rollouttable_test.go holds the rollout table (rollouttable.go) to the per-query Rollout
// (attention.go, rollout.go; itself held to brute-force matrix products in rollout_test.go
// and attention_test.go) on a random store of four segments: one of 308 patches (four tasks
// of taskRows (96 rows at this size), the last with a short 6-row tile; two k-blocks of rtDepth; a short last strip
// for 16 and 32 lanes), one of 36 and a two-frame video of 16 each, under every head fusion,
// with and without a discard, through every product kernel.
//
// Invariant: after block b, every row of the table is Rollout(q, b) within the float32 bound
// of the file comment, its whole-image row is the mean of its rows, and its bits do not
// depend on GOMAXPROCS, on FMA6x16 vs FMA6x32, on Extend vs Build, on a cancelled fold
// redone, or on readers reading while it folds. The mutations it catches: the new block
// multiplied on the right (P_{b-1}·Â_b), a k-block not carried (carry 0 on every k-block),
// the last short strip or short tile dropped, Whole as a mean over columns, the identity added
// before the discard, and a cancelled fold published.

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// tableStore is the random store of the tests: 4 heads of 8, 3 blocks, segments of 308, 36,
// 16 and 16 patches.
func tableStore(t testing.TB) *Store {
	return randomStore(t, 4, 8, 3, geom.Grid{T: 1, H: 14, W: 22}, geom.Grid{T: 1, H: 6, W: 6}, geom.Grid{T: 2, H: 4, W: 4})
}

// tableQueries are the queries checked against Rollout: every query of the small segments,
// and in the long one its ends, both sides of each task boundary, the short tile's rows and
// a spread.
func tableQueries(s *Store) []int {
	var qs []int
	for _, g := range s.Layout.Segments {
		L := g.End - g.Start
		if L <= 64 {
			for q := g.Start; q < g.End; q++ {
				qs = append(qs, q)
			}
			continue
		}
		for _, i := range []int{0, 95, 96, 191, 302, 307, 150} {
			if i < L {
				qs = append(qs, g.Start+i)
			}
		}
	}
	return qs
}

var tableOptions = []RolloutOptions{{Fusion: FuseMean}, {Fusion: FuseMax, Discard: 0.3}, {Fusion: FuseMin, Discard: 0.9}}

// checkAgainstRollout compares the table's rows up to block b with Rollout, entry by entry:
// |row - Rollout| <= ((b+1)(L+2+e) + 2) * 2^-24 * Rollout (+ 2^-140 for the tiny ones), e the
// relative error of Â's entries in units of 2^-24 (0 but for the AVX-512 rows: colAllowance).
// It returns the largest |row - Rollout| / (2^-24 * Rollout) seen, for the log.
func checkAgainstRollout(t *testing.T, s *Store, tab *RolloutTable, b int, qs []int, e float64) float64 {
	t.Helper()
	ctx := context.Background()
	var worst float64
	for _, q := range qs {
		got, err := tab.RowAt(q, b)
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Rollout(ctx, q, b, tab.Options())
		if err != nil {
			t.Fatal(err)
		}
		seg := s.Layout.FrameOf(q)
		L := seg.End - seg.Start
		bound := float64(b+1)*(float64(L+2)+e) + 2
		for j := range got {
			g, w := float64(got[j]), float64(want[j])
			if (j < seg.Start || j >= seg.End) && got[j] != 0 {
				t.Fatalf("%v: block %d query %d: %g at %d outside its segment %v", tab.Options(), b, q, got[j], j, seg)
			}
			d := math.Abs(g - w)
			if d > bound*0x1p-24*w+0x1p-140 {
				t.Fatalf("%v: block %d query %d key %d: table %g, Rollout %g (%.1f x 2^-24 relative, allowed %.0f)", tab.Options(), b, q, j, g, w, d/(0x1p-24*w), bound)
			}
			if w > 0 {
				worst = max(worst, d/(0x1p-24*w))
			}
		}
	}
	return worst
}

// checkWhole holds Whole up to block b to the float64 mean of the table's own rows (every
// query, in order: the bits Whole promises) and, on the small segments, to the mean of
// Rollout's rows within the same bound as the rows.
func checkWhole(t *testing.T, s *Store, tab *RolloutTable, b int, e float64) {
	t.Helper()
	whole, err := tab.WholeAt(b)
	if err != nil {
		t.Fatal(err)
	}
	S := s.Layout.Rows()
	for _, seg := range tab.Segments() {
		L := seg.End - seg.Start
		sum := make([]float64, S)
		ref := make([]float64, S)
		for q := seg.Start; q < seg.End; q++ {
			r, err := tab.RowAt(q, b)
			if err != nil {
				t.Fatal(err)
			}
			for j, x := range r {
				sum[j] += float64(x)
			}
			if L <= 64 {
				r, err := s.Rollout(context.Background(), q, b, tab.Options())
				if err != nil {
					t.Fatal(err)
				}
				for j, x := range r {
					ref[j] += float64(x) / float64(L)
				}
			}
		}
		var total float64
		for j := seg.Start; j < seg.End; j++ {
			if want := float32(sum[j] / float64(L)); whole[j] != want {
				t.Fatalf("%v: block %d: whole[%d] = %g, the mean of the rows %g", tab.Options(), b, j, whole[j], want)
			}
			total += float64(whole[j])
			if L <= 64 {
				if d := math.Abs(float64(whole[j]) - ref[j]); d > (float64(b+1)*(float64(L+2)+e)+3)*0x1p-24*ref[j] {
					t.Fatalf("%v: block %d: whole[%d] = %g, the mean of Rollout %g", tab.Options(), b, j, whole[j], ref[j])
				}
			}
		}
		if math.Abs(total-1) > 1e-5 {
			t.Errorf("%v: block %d: the whole-image rollout of %v sums to %v", tab.Options(), b, seg, total)
		}
	}
}

// buildTable folds every kept block into a new table for o, one Extend at a time.
func buildTable(t testing.TB, s *Store, o TableOptions) *RolloutTable {
	t.Helper()
	tab, err := s.NewRolloutTable(o)
	if err != nil {
		t.Fatal(err)
	}
	for b := range s.KeptQK() {
		if err := tab.Extend(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	return tab
}

// tableRows is every row of the table up to block b, by query.
func tableRows(t testing.TB, tab *RolloutTable, b int) [][]float32 {
	t.Helper()
	var rows [][]float32
	for q := range tab.s.Layout.Rows() {
		r, err := tab.RowAt(q, b)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

func sameRows(a, b [][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bitEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Every row after every block is Rollout's, and Whole the mean of the rows, under every
// product kernel; FMA6x32 gives FMA6x16's bits where both score through the float64 path (a
// discard); the AVX-512 rows (no discard) are held to Rollout with their allowance.
func TestRolloutTableMatchesRollout(t *testing.T) {
	s := tableStore(t)
	qs := tableQueries(s)
	e := colAllowance(s)
	fmaRows := map[int][][]float32{}
	kernel.EachKernel(func(name string) {
		for oi, o := range tableOptions {
			tab, err := s.NewRolloutTable(TableOptions{Rollout: o, History: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			cols := name == "avx512" && o.Discard == 0
			var worst float64
			for b := range s.KeptQK() {
				if err := tab.Extend(context.Background(), b); err != nil {
					t.Fatal(err)
				}
				if name == "avx512" && !cols { // FMA6x32 over 32-lane strips: FMA6x16's bits, not just close
					if !sameRows(tableRows(t, tab, b), fmaRows[oi*8+b]) {
						t.Fatalf("%v, block %d: the FMA6x32 table differs from the FMA6x16 one", o, b)
					}
					continue
				}
				if name == "fma" {
					fmaRows[oi*8+b] = tableRows(t, tab, b)
				}
				allow := 0.0
				if cols {
					allow = e
				}
				worst = max(worst, checkAgainstRollout(t, s, tab, b, qs, allow))
				checkWhole(t, s, tab, b, allow)
			}
			if name != "avx512" || cols {
				t.Logf("%s %v: rows within %.1f x 2^-24 relative of Rollout", name, o, worst)
			}
		}
	})
}

// maxScore is the largest |q.k*scale| of any block of s within a segment, any head (float64).
func maxScore(s *Store) float64 {
	var m float64
	D, hd := s.Hidden, s.HeadDim
	scale := 1 / math.Sqrt(float64(hd))
	for b := range s.KeptQK() {
		qk, _ := s.QK(b)
		for _, g := range s.Layout.Segments {
			for i := g.Start; i < g.End; i++ {
				for j := g.Start; j < g.End; j++ {
					for h := range s.Heads {
						var dot float64
						for x := range hd {
							dot += float64(qk[i*2*D+h*hd+x]) * float64(qk[j*2*D+D+h*hd+x])
						}
						m = max(m, math.Abs(dot*scale))
					}
				}
			}
		}
	}
	return m
}

// colAllowance is the relative error the AVX-512 rows may add to Â's entries, in units of
// 2^-24: (24M + 2H + 17) with M the largest |score| (rolloutcols.go, Numerics).
func colAllowance(s *Store) float64 { return 24*maxScore(s) + 2*float64(s.Heads) + 17 }

// The AVX-512 rows give every fusion's Â rows within the allowance of the float64 path's, for
// every query of every segment (32-query tiles, the last ones short) — and not the rows of
// the neighbouring query.
func TestFusedColsMatchRows(t *testing.T) {
	if !kernel.HasAVX512 {
		t.Skip("no AVX-512: the table scores through the float64 path only")
	}
	s := tableStore(t)
	e := colAllowance(s)
	var worst float64
	for b := range s.KeptQK() {
		ab, err := s.attnBlock(b, s.Layout.Segments...)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Fusions() {
			for _, seg := range s.Layout.Segments {
				L := seg.End - seg.Start
				ws, sc, keys := newColScratch(L, s.HeadDim), newScratch(L), ab.colKeys(seg, 2)
				got, want := make([]float32, L), make([]float32, L)
				for i := 0; i < L; i += colLanes {
					nq := min(colLanes, L-i)
					ab.fusedCols(ws, seg, keys, seg.Start+i, nq, f)
					for c := range nq {
						hatRow(ws.gather(c, L), i+c, got)
						ab.fusedRows(sc, []int{seg.Start + i + c}, seg, -1, f)
						hatRow(row(sc.m, 0, L), i+c, want)
						for j := range L {
							d := math.Abs(float64(got[j]) - float64(want[j]))
							if d > e*0x1p-24*float64(want[j])+0x1p-140 {
								t.Fatalf("block %d %v query %d key %d: %g, the float64 path %g (%.0f x 2^-24, allowed %.0f)", b, f, seg.Start+i+c, j, got[j], want[j], d/(0x1p-24*float64(want[j])), e)
							}
							worst = max(worst, d/(0x1p-24*float64(want[j])))
						}
						if c+1 < nq { // the neighbour's row is far outside the allowance
							hatRow(ws.gather(c+1, L), i+c, got)
							var off float64
							for j := range L {
								off = max(off, math.Abs(float64(got[j])-float64(want[j]))/float64(want[j]))
							}
							if off < 100*e*0x1p-24 {
								t.Fatalf("block %d %v query %d: lane %d's row is within %.2g of lane %d's", b, f, seg.Start+i+c, c+1, off, c)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("Â rows within %.1f x 2^-24 relative of the float64 path (allowed %.0f)", worst, e)
}

// hatMatrices is Â_l (float64, L x L) of every kept block over seg, from the float64 rows.
func hatMatrices(t *testing.T, s *Store, seg backend.Segment, f Fusion) [][]float64 {
	L := seg.End - seg.Start
	var out [][]float64
	for b := range s.KeptQK() {
		ab, err := s.attnBlock(b, seg)
		if err != nil {
			t.Fatal(err)
		}
		sc := newScratch(L)
		a := make([]float64, L*L)
		for i := range L {
			ab.fusedRows(sc, []int{seg.Start + i}, seg, -1, f)
			m := row(sc.m, 0, L)
			var sum float64
			for _, x := range m {
				sum += x
			}
			for j, x := range m {
				a[i*L+j] = 0.5 * x / (0.5*sum + 0.5)
			}
			a[i*L+i] += 0.5 / (0.5*sum + 0.5)
		}
		out = append(out, a)
	}
	return out
}

func matmul64(a, b []float64, L int) []float64 {
	c := make([]float64, L*L)
	for i := range L {
		for k := range L {
			x := a[i*L+k]
			for j := range L {
				c[i*L+j] += x * b[k*L+j]
			}
		}
	}
	return c
}

// The table's bound tells the two orders of the product apart: against an independent float64
// product the table is within the bound of Â_b ... Â_0 and far outside it of Â_0 ... Â_b (the
// new block multiplied on the right), on the long segment, under every kernel.
func TestRolloutTableNotReversed(t *testing.T) {
	s := tableStore(t)
	e := colAllowance(s)
	seg := s.Layout.Segments[0]
	L := seg.End - seg.Start
	kernel.EachKernel(func(name string) {
		hats := hatMatrices(t, s, seg, FuseMean)
		tab := buildTable(t, s, TableOptions{History: 1 << 30})
		fwd, rev := hats[0], hats[0]
		for b := 1; b < len(hats); b++ {
			fwd, rev = matmul64(hats[b], fwd, L), matmul64(rev, hats[b], L)
			bound := float64(b+1)*(float64(L+2)+e) + 2 // checkAgainstRollout's, with the allowance
			var toFwd, toRev float64
			for i := range L {
				got, err := tab.RowAt(seg.Start+i, b)
				if err != nil {
					t.Fatal(err)
				}
				for j := range L {
					g := float64(got[seg.Start+j])
					toFwd = max(toFwd, math.Abs(g-fwd[i*L+j])/(0x1p-24*fwd[i*L+j]))
					toRev = max(toRev, math.Abs(g-rev[i*L+j])/(0x1p-24*rev[i*L+j]))
				}
			}
			if toFwd > bound || toRev < 10*bound {
				t.Errorf("%s block %d: %.0f x 2^-24 from Â_b...Â_0, %.0f from Â_0...Â_b (bound %.0f)", name, b, toFwd, toRev, bound)
			}
			t.Logf("%s block %d: %.1f x 2^-24 from the product, %.3g from the reversed one (bound %.0f)", name, b, toFwd, toRev, bound)
		}
	})
}

// A table over one segment has that segment's rows, and none of the others.
func TestRolloutTableOneSegment(t *testing.T) {
	s := tableStore(t)
	seg := s.Layout.Segments[1]
	tab := buildTable(t, s, TableOptions{Segments: []backend.Segment{seg}})
	all := buildTable(t, s, TableOptions{})
	for q := range s.Layout.Rows() {
		got, upTo := tab.Row(q)
		if q < seg.Start || q >= seg.End {
			if got != nil || upTo != -1 {
				t.Fatalf("query %d outside the table's segment: a row up to %d", q, upTo)
			}
			continue
		}
		want, _ := all.Row(q)
		if upTo != 2 || !bitEqual(got, want) {
			t.Fatalf("query %d: the one-segment table's row differs from the page table's", q)
		}
	}
	w, _ := tab.Whole()
	for j, x := range w {
		if (j < seg.Start || j >= seg.End) && x != 0 {
			t.Fatalf("whole-image row: %g at %d outside %v", x, j, seg)
		}
	}
}

// The bits do not depend on the number of cores (GOMAXPROCS or Threads), nor on Build vs one
// Extend a block.
func TestRolloutTableDeterministic(t *testing.T) {
	s := tableStore(t)
	kernel.EachKernel(func(name string) {
		for _, o := range tableOptions[:2] {
			ref := buildTable(t, s, TableOptions{Rollout: o})
			want := tableRows(t, ref, 2)
			wantWhole, _ := ref.Whole()
			prev := runtime.GOMAXPROCS(1)
			for _, procs := range []int{1, 3} {
				runtime.GOMAXPROCS(procs)
				tab, err := s.NewRolloutTable(TableOptions{Rollout: o})
				if err != nil {
					t.Fatal(err)
				}
				var calls [][2]int
				if err := tab.Build(context.Background(), 2, func(done, of int) { calls = append(calls, [2]int{done, of}) }); err != nil {
					t.Fatal(err)
				}
				if len(calls) != 3 || calls[0] != [2]int{1, 3} || calls[2] != [2]int{3, 3} {
					t.Errorf("%s %v: progress calls %v", name, o, calls)
				}
				whole, _ := tab.Whole()
				if !sameRows(tableRows(t, tab, 2), want) || !bitEqual(whole, wantWhole) {
					t.Errorf("%s %v: GOMAXPROCS %d (Build) differs from the table built by Extend", name, o, procs)
				}
			}
			runtime.GOMAXPROCS(prev)
			one := buildTable(t, s, TableOptions{Rollout: o, Threads: 1}) // one goroutine: 96-row tasks in order
			if !sameRows(tableRows(t, one, 2), want) {
				t.Errorf("%s %v: Threads 1 differs", name, o)
			}
		}
	})
}

// The task cut does not change a bit: on a 1,024-patch segment one goroutine takes 192-row
// tasks and three take 96-row ones (start-up kernel only: the generic loop is slow at 1,024).
func TestRolloutTableTaskRows(t *testing.T) {
	s := randomStore(t, 4, 8, 2, geom.Grid{T: 1, H: 32, W: 32})
	if taskRows(1024, 1) == taskRows(1024, 3) {
		t.Fatalf("taskRows %d for 1 and 3 goroutines: the test cuts nothing differently", taskRows(1024, 1))
	}
	for _, o := range tableOptions[:2] {
		a := buildTable(t, s, TableOptions{Rollout: o, Threads: 1})
		b := buildTable(t, s, TableOptions{Rollout: o, Threads: 3})
		wa, _ := a.Whole()
		wb, _ := b.Whole()
		if !sameRows(tableRows(t, a, 1), tableRows(t, b, 1)) || !bitEqual(wa, wb) {
			t.Errorf("%v: %d-row tasks differ from %d-row tasks", o, taskRows(1024, 1), taskRows(1024, 3))
		}
	}
}

// A fold cancelled part way — at its first check, or at its last (inside the last task, where
// par.For has nothing left to refuse) — returns the context's error and leaves the table as it
// was; the block folded in again has the bits of an uninterrupted table. A done context folds
// nothing.
func TestRolloutTableCancel(t *testing.T) {
	s := tableStore(t)
	prev := runtime.GOMAXPROCS(1) // one worker: the checks come in one order, so "the last" is known
	defer runtime.GOMAXPROCS(prev)
	for _, o := range tableOptions {
		ref := buildTable(t, s, TableOptions{Rollout: o})
		checks := 0 // in folding block 1
		{
			tab, err := s.NewRolloutTable(TableOptions{Rollout: o})
			if err != nil {
				t.Fatal(err)
			}
			must0(t, tab.Extend(context.Background(), 0))
			tab.step = func() { checks++ }
			must0(t, tab.Extend(context.Background(), 1))
		}
		for _, at := range []int{1, checks} {
			tab, err := s.NewRolloutTable(TableOptions{Rollout: o})
			if err != nil {
				t.Fatal(err)
			}
			must0(t, tab.Extend(context.Background(), 0))
			before := tableRows(t, tab, 0)
			ctx, cancel := context.WithCancel(context.Background())
			n, frac := 0, -1.0
			tab.step = func() {
				if n++; n == at {
					_, frac = tab.Progress()
					cancel()
				}
			}
			err = tab.Build(ctx, 2, nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%v: cancelled at check %d of %d in block 1: err %v", o, at, checks, err)
			}
			if n := tab.Blocks(); n != 1 {
				t.Fatalf("%v: a fold cancelled at check %d of %d left %d blocks", o, at, checks, n)
			}
			if !sameRows(tableRows(t, tab, 0), before) {
				t.Fatalf("%v: a cancelled fold changed the rows", o)
			}
			if _, f := tab.Progress(); f != 0 || frac < 0 || frac >= 1 || (at == checks && frac == 0) {
				t.Errorf("%v: progress at check %d of %d: %v, after the fold %v", o, at, checks, frac, f)
			}
			if err := tab.Extend(ctx, 1); !errors.Is(err, context.Canceled) || tab.Blocks() != 1 {
				t.Fatalf("%v: a done context: err %v, %d blocks", o, err, tab.Blocks())
			}
			tab.step = nil
			must0(t, tab.Build(context.Background(), 2, nil))
			if !sameRows(tableRows(t, tab, 2), tableRows(t, ref, 2)) {
				t.Fatalf("%v: the table folded again after a cancel differs", o)
			}
		}
	}
}

func must0(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Readers during a fold see the rows of some block folded in, whole, never a mix: every row
// read is bit-equal to the final table's row up to the block it says.
func TestRolloutTableReadDuringFold(t *testing.T) {
	s := tableStore(t)
	o := TableOptions{Rollout: tableOptions[1], History: 1 << 30}
	ref := buildTable(t, s, o)
	tab, err := s.NewRolloutTable(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seen [3]atomic.Int32
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := r * 101
			for {
				select {
				case <-stop:
					return
				default:
				}
				q = (q + 37) % s.Layout.Rows()
				row, upTo := tab.Row(q)
				if upTo < 0 {
					if row != nil {
						t.Error("a row before any block")
					}
					continue
				}
				seen[upTo].Add(1)
				if want, _ := ref.RowAt(q, upTo); !bitEqual(row, want) {
					t.Errorf("query %d up to %d: read during a fold differs from the row of that block", q, upTo)
				}
				whole, wb := tab.Whole()
				if want, _ := ref.WholeAt(wb); wb < 0 || !bitEqual(whole, want) {
					t.Errorf("whole up to %d: read during a fold differs", wb)
				}
			}
		}()
	}
	tab.step = func() { runtime.Gosched() }
	if err := tab.Build(context.Background(), 2, nil); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if seen[2].Load() == 0 && seen[0].Load()+seen[1].Load() == 0 {
		t.Log("no read landed during the fold")
	}
}

// History keeps the most recent earlier products that fit; the rest say ErrRowNotKept, and
// Bytes counts what is kept.
func TestRolloutTableHistoryAndBytes(t *testing.T) {
	s := tableStore(t)
	probe := &RolloutTable{nr: keyStrip}
	if kernel.UseAVX512 {
		probe.nr = 2 * keyStrip
	}
	var lens []int
	for _, g := range s.Layout.Segments {
		lens = append(lens, g.End-g.Start)
		probe.parts = append(probe.parts, tablePart{seg: g, L: g.End - g.Start})
	}
	prod := probe.productBytes()
	S := int64(s.Layout.Rows())
	for _, c := range []struct {
		history int64
		kept    []int
	}{{0, nil}, {prod, []int{1}}, {prod + 1, []int{1}}, {2 * prod, []int{0, 1}}} {
		tab := buildTable(t, s, TableOptions{History: c.history})
		for b := range 2 {
			_, err := tab.RowAt(7, b)
			if k := contains(c.kept, b); k != (err == nil) || (!k && !errors.Is(err, ErrRowNotKept)) {
				t.Errorf("history %d: block %d: err %v, kept %v", c.history, b, err, c.kept)
			}
			if _, err := tab.WholeAt(b); err != nil {
				t.Errorf("history %d: whole-image row of block %d: %v", c.history, b, err)
			}
		}
		if want := int64(1+len(c.kept))*prod + 3*S*4; tab.Bytes() != want {
			t.Errorf("history %d: Bytes %d, want %d", c.history, tab.Bytes(), want)
		}
		if c.history == 0 {
			idle, building := RolloutTableBytes(RolloutOptions{}, s.Hidden, 3, lens...)
			if idle != tab.Bytes() || building <= idle+prod {
				t.Errorf("RolloutTableBytes: idle %d building %d, the table holds %d", idle, building, tab.Bytes())
			}
		}
	}
	if _, err := buildTable(t, s, TableOptions{}).RowAt(7, 3); !errors.Is(err, ErrRowNotKept) {
		t.Errorf("a block not folded in: %v", err)
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestRolloutTableRefuses(t *testing.T) {
	s := tableStore(t)
	ctx := context.Background()
	for _, o := range []TableOptions{
		{Rollout: RolloutOptions{Discard: 1}},
		{Rollout: RolloutOptions{Fusion: 5}},
		{Segments: []backend.Segment{{Start: 1, End: 9}}},
		{Segments: []backend.Segment{s.Layout.Segments[1], s.Layout.Segments[1]}},
		{History: -1},
		{Threads: -1},
	} {
		if _, err := s.NewRolloutTable(o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	tab, err := s.NewRolloutTable(TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if row, upTo := tab.Row(3); row != nil || upTo != -1 {
		t.Error("an empty table gave a row")
	}
	if w, upTo := tab.Whole(); w != nil || upTo != -1 {
		t.Error("an empty table gave a whole-image row")
	}
	if err := tab.Extend(ctx, 1); err == nil {
		t.Error("block 1 folded in before block 0")
	}
	if err := tab.Build(ctx, 3, nil); err == nil || tab.Blocks() != 0 {
		t.Errorf("Build past the blocks kept: err %v, %d blocks", err, tab.Blocks())
	}
	if err := tab.Build(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := tab.Extend(ctx, 0); err != nil || tab.Blocks() != 2 {
		t.Errorf("a block folded in again: err %v, %d blocks", err, tab.Blocks())
	}
	if _, err := tab.RowAt(s.Layout.Rows(), 1); err == nil {
		t.Error("a query past the page gave a row")
	}
}
