package probe_test

// follow_bench_test.go times what following the mouse costs the probes on a page of the 8B
// tower's shape: D = 1152, 16 heads of 72, one segment of 5,120 patches (a 64 x 80 grid), one
// block of random post-rope q|k. Reported as ms per call.
//
// Invariant: the page is one segment of 5,120 rows and 16 heads of 72, so every row is scored
// against all 5,120 keys of every head asked for. The mutation that would silently break it:
// a smaller grid or several segments, which would make every number look fast and measure
// nothing about the 8B.

import (
	"math/rand/v2"
	"testing"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/probe"
)

// store8B is a store of the 8B tower's shape with blocks blocks of random q|k.
func store8B(tb testing.TB, blocks int) *probe.Store {
	tb.Helper()
	lay, err := geom.NewLayout(2, []geom.Grid{{T: 1, H: 64, W: 80}})
	must(tb, err)
	s := probe.NewStore(lay, 16, 72)
	rng := rand.New(rand.NewPCG(8, 8))
	for range blocks {
		qk := make([]float32, lay.Rows()*2*s.Hidden)
		for i := range qk {
			qk[i] = float32(rng.NormFloat64())
		}
		s.AddQK(qk)
	}
	if len(lay.Segments) != 1 || lay.Rows() != 5120 {
		tb.Fatalf("page: %d segments, %d rows", len(lay.Segments), lay.Rows())
	}
	return s
}

// BenchmarkFollowRow8B: one head's row of one query (what a hover costs the probes).
func BenchmarkFollowRow8B(b *testing.B) {
	s := store8B(b, 1)
	q := 0
	for b.Loop() {
		if _, err := s.AttentionRow(0, 3, q); err != nil {
			b.Fatal(err)
		}
		q = (q + 977) % 5120
	}
	reportMs(b)
}

// BenchmarkFollowMean8B: the mean of the 16 heads' rows of one query.
func BenchmarkFollowMean8B(b *testing.B) {
	s := store8B(b, 1)
	q := 0
	for b.Loop() {
		if _, err := s.AttentionRowMean(0, q); err != nil {
			b.Fatal(err)
		}
		q = (q + 977) % 5120
	}
	reportMs(b)
}

// BenchmarkColumn8B: which patches attend to one patch (one head): every row of the segment.
func BenchmarkColumn8B(b *testing.B) {
	s := store8B(b, 1)
	for b.Loop() {
		if _, err := s.AttentionColumn(b.Context(), 0, 3, 2000); err != nil {
			b.Fatal(err)
		}
	}
	reportMs(b)
}

// BenchmarkMatrix8B: one head's 5,120 x 5,120 matrix max-pooled to 512 x 512.
func BenchmarkMatrix8B(b *testing.B) {
	s := store8B(b, 1)
	seg := s.Layout.Segments[0]
	for b.Loop() {
		if _, err := s.AttentionMatrix(b.Context(), 0, 3, seg, probe.Whole(5120), 512); err != nil {
			b.Fatal(err)
		}
	}
	reportMs(b)
}
