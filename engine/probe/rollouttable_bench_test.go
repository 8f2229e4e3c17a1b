package probe

// rollouttable_bench_test.go times the rollout table (rollouttable.go) on pages of the 8B
// tower's shape: 16 heads of 72, one segment of 1,024 (32 x 32) or 5,120 (64 x 80) patches,
// random post-rope q|k. Per block: the whole fold (every query's fused row, Â, the product,
// the whole-image row), the product alone (L^3 multiply-adds, 2*L^3 flop) and the scoring
// alone (H*L^2*hd multiply-adds and H*L^2 exponentials); then what a click costs once built
// (Row at 5,120) and how long a fold takes to stop once its context is cancelled.
//
// Invariant: the timed page is one segment of L patches and 16 x 72 heads, and the fold timed
// is of block 1 (block 0 has no product), so every number is a full block of the 8B at that
// size. The mutation that would silently break it: timing block 0 (or a page cut into
// segments): the product would vanish from the numbers and the build look several times
// faster than it is.

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
	"golang.org/x/sys/unix"
)

// store8BOf is a store of the 8B's heads (16 x 72) over one h x w grid with blocks blocks of
// random q|k.
func store8BOf(tb testing.TB, h, w, blocks int) *Store {
	tb.Helper()
	lay, err := geom.NewLayout(2, []geom.Grid{{T: 1, H: h, W: w}})
	if err != nil {
		tb.Fatal(err)
	}
	s := NewStore(lay, 16, 72)
	rng := rand.New(rand.NewPCG(8, 9))
	for range blocks {
		qk := make([]float32, lay.Rows()*2*s.Hidden)
		for i := range qk {
			qk[i] = float32(rng.NormFloat64())
		}
		s.AddQK(qk)
	}
	if len(lay.Segments) != 1 || lay.Rows() != h*w {
		tb.Fatalf("page: %d segments, %d rows", len(lay.Segments), lay.Rows())
	}
	return s
}

// table8B is a table of s (one segment) with block 0 folded in.
func table8B(tb testing.TB, s *Store, o RolloutOptions) *RolloutTable {
	tb.Helper()
	tab, err := s.NewRolloutTable(TableOptions{Rollout: o})
	if err != nil {
		tb.Fatal(err)
	}
	if err := tab.Extend(context.Background(), 0); err != nil {
		tb.Fatal(err)
	}
	return tab
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gflops reports flop per op as GFLOP/s (wall clock), the time per op in ms, and GFLOP per
// CPU second since cpu0 (what the code gets out of the time the cores gave it: steadier than
// the wall clock on a machine shared with other work, and a per-core figure).
func gflops(b *testing.B, flop float64, cpu0 time.Duration) {
	sec := b.Elapsed().Seconds() / float64(b.N)
	cpu := (cpuTime() - cpu0).Seconds() / float64(b.N)
	b.ReportMetric(sec*1e3, "ms/op")
	b.ReportMetric(flop/sec/1e9, "GFLOP/s")
	b.ReportMetric(flop/cpu/1e9, "GFLOP/cpu-s")
}

// benchFold times folding in block 1 (then sets the table back to block 0): the whole cost
// of a block. GFLOP/s counts the scores and the product (2*H*L^2*hd + 2*L^3).
func benchFold(b *testing.B, h, w int, o RolloutOptions) {
	s := store8BOf(b, h, w, 2)
	tab := table8B(b, s, o)
	L := h * w
	ctx := context.Background()
	cur, wholes := tab.cur, slices.Clone(tab.wholes)
	var spare [][]float32
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		var err error
		if spare, err = tab.fold(ctx, 1, spare); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		spare, tab.cur = tab.cur, cur
		tab.blocks, tab.wholes = 1, slices.Clone(wholes)
		b.StartTimer()
	}
	gflops(b, 2*16*72*float64(L)*float64(L)+2*float64(L)*float64(L)*float64(L), cpu0)
}

func BenchmarkTableFold1024(b *testing.B) { benchFold(b, 32, 32, RolloutOptions{}) }
func BenchmarkTableFold5120(b *testing.B) { benchFold(b, 64, 80, RolloutOptions{}) }

// With a discard (max fusion, 0.9): the fused matrix first, then the rows from it.
func BenchmarkTableFoldDiscard5120(b *testing.B) {
	benchFold(b, 64, 80, RolloutOptions{Fusion: FuseMax, Discard: 0.9})
}

// benchProduct times the product alone: a random row-stochastic-ish A (L x L) times a
// product in strip layout, all tasks on all cores.
func benchProduct(b *testing.B, L int) {
	s := store8BOf(b, 2, L/2, 0)
	tab, err := s.NewRolloutTable(TableOptions{})
	if err != nil {
		b.Fatal(err)
	}
	part := tab.parts[0]
	rng := rand.New(rand.NewPCG(1, 1))
	a := make([]float32, L*L)
	for i := range a {
		a[i] = rng.Float32() / float32(L)
	}
	prev := make([]float32, part.strips*tab.nr*L)
	for i := range prev {
		prev[i] = rng.Float32() / float32(L)
	}
	next := make([]float32, len(prev))
	rows := taskRows(L, par.Workers(1<<30))
	tasks := (L + rows - 1) / rows
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		par.Do(tasks, par.Workers(tasks), func(_, ti int) {
			r0, r1 := ti*rows, min(L, (ti+1)*rows)
			tab.product(nil, a[r0*L:], part, r0, r1, prev, next)
		})
	}
	gflops(b, 2*float64(L)*float64(L)*float64(L), cpu0)
}

func BenchmarkTableProduct1024(b *testing.B) { benchProduct(b, 1024) }
func BenchmarkTableProduct5120(b *testing.B) { benchProduct(b, 5120) }

// benchScoring times every query's fused (mean) row turned into Â rows, without the product:
// through the float64 path (fusedRows, what a discard and a CPU without AVX-512 take) or the
// AVX-512 tiles (fusedCols). GFLOP/s counts the scores (2*H*L^2*hd); the H*L^2 exponentials
// and the softmax passes are most of the time.
func benchScoring(b *testing.B, h, w int, cols bool) {
	if cols && !kernel.HasAVX512 {
		b.Skip("no AVX-512")
	}
	s := store8BOf(b, h, w, 1)
	seg := s.Layout.Segments[0]
	L := h * w
	rows := taskRows(L, par.Workers(1<<30))
	tasks := (L + rows - 1) / rows
	workers := par.Workers(tasks)
	scr := make([]*foldScr, workers)
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		ab, err := s.attnBlockBare(0)
		if !cols {
			ab, err = s.attnBlock(0, seg)
		}
		if err != nil {
			b.Fatal(err)
		}
		var keys []float32
		if cols {
			keys = ab.colKeys(seg, 2)
		}
		par.Do(tasks, workers, func(w, ti int) {
			if scr[w] == nil {
				scr[w] = &foldScr{sc: newScratch(L), cols: newColScratch(L, 72), a: make([]float32, rows*L)}
			}
			sc := scr[w]
			r0, r1 := ti*rows, min(L, (ti+1)*rows)
			for i := r0; i < r1 && cols; i += colLanes {
				nq := min(colLanes, r1-i)
				ab.fusedCols(sc.cols, seg, keys, i, nq, FuseMean)
				for c := range nq {
					hatRow(sc.cols.gather(c, L), i+c, sc.a[(i+c-r0)*L:][:L])
				}
			}
			for i := r0; i < r1 && !cols; i += qTile {
				var qs []int
				for q := i; q < min(r1, i+qTile); q++ {
					qs = append(qs, q)
				}
				ab.fusedRows(sc.sc, qs, seg, -1, FuseMean)
				for a := range qs {
					hatRow(row(sc.sc.m, a, L), i+a, sc.a[(i+a-r0)*L:][:L])
				}
			}
		})
	}
	gflops(b, 2*16*72*float64(L)*float64(L), cpu0)
}

func BenchmarkTableScoring1024(b *testing.B)     { benchScoring(b, 32, 32, true) }
func BenchmarkTableScoring5120(b *testing.B)     { benchScoring(b, 64, 80, true) }
func BenchmarkTableScoringF64x1024(b *testing.B) { benchScoring(b, 32, 32, false) }
func BenchmarkTableScoringF64x5120(b *testing.B) { benchScoring(b, 64, 80, false) }

// BenchmarkTableRow5120: what a click or a hover costs once the table is built: one row of
// 5,120 copied out (and, for the metric, the whole-image row).
func BenchmarkTableRow5120(b *testing.B) {
	s := store8BOf(b, 64, 80, 1)
	tab := table8B(b, s, RolloutOptions{})
	q := 0
	b.ResetTimer()
	for b.Loop() {
		if row, upTo := tab.Row(q); row == nil || upTo != 0 {
			b.Fatal("no row")
		}
		q = (q + 977) % 5120
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/op")
}

// BenchmarkTableCancel5120: how long a fold of block 1 at 5,120 takes to return once its
// context is cancelled at various points of the block (max and mean over the ops, in ms).
func BenchmarkTableCancel5120(b *testing.B) { benchCancel(b, RolloutOptions{}, 1500) }

// BenchmarkTableCancelDiscard5120: the same with a discard (max, 0.9): the cancel may land in
// the fused matrix, the threshold or the product.
func BenchmarkTableCancelDiscard5120(b *testing.B) {
	benchCancel(b, RolloutOptions{Fusion: FuseMax, Discard: 0.9}, 4000)
}

func benchCancel(b *testing.B, o RolloutOptions, spanMs int) {
	s := store8BOf(b, 64, 80, 2)
	tab := table8B(b, s, o)
	var worst, total time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- tab.Extend(ctx, 1) }()
		time.Sleep(time.Duration(50+(n*397)%spanMs) * time.Millisecond)
		t0 := time.Now()
		cancel()
		err := <-done
		lat := time.Since(t0)
		if err == nil {
			b.Fatal("the fold ended before the cancel: sleep less")
		}
		worst, total, n = max(worst, lat), total+lat, n+1
	}
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms")
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "mean-ms")
}
