package probe

import (
	"context"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
)

// Received is the column sums of the head-mean rows (QueryRows' means, summed over every
// query of the key's segment), each segment handing out its length in total; the same bits
// on one core as on all; a masked or dropped key receives 0 and a dropped query gives nothing.
func TestReceived(t *testing.T) {
	s := randomStore(t, 3, 16, 2, geom.Grid{T: 1, H: 6, W: 8}, geom.Grid{T: 2, H: 4, W: 4})
	ctx := context.Background()
	got, err := s.Received(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	S := s.Layout.Rows()
	want := make([]float64, S)
	for q := range S {
		_, mean, err := s.QueryRows(ctx, 1, q)
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range mean {
			want[j] += float64(p)
		}
	}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-6 {
			t.Fatalf("row %d receives %v, the rows' column sum is %v", j, got[j], want[j])
		}
	}
	for _, seg := range s.Layout.Segments {
		var sum float64
		for _, x := range got[seg.Start:seg.End] {
			sum += x
		}
		if math.Abs(sum-float64(seg.Len())) > 1e-6*float64(seg.Len()) { // float32 probabilities on the AVX-512 path
			t.Errorf("segment %v hands out %v, want its length", seg, sum)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	one, err := s.Received(ctx, 1)
	runtime.GOMAXPROCS(prev)
	if err != nil || !slices.Equal(one, got) {
		t.Errorf("one core gives other bits (%v)", err)
	}
	var kept []int
	for r := range S {
		if r != 3 && r != 50 {
			kept = append(kept, r)
		}
	}
	s.Views = geom.NewViews(s.Layout, 2)
	if err := s.Views.Drop(0, kept); err != nil {
		t.Fatal(err)
	}
	after, err := s.Received(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if after[3] != 0 || after[50] != 0 || slices.Equal(after, got) {
		t.Errorf("dropped rows 3 and 50 receive %v and %v", after[3], after[50])
	}
	var total float64
	for _, x := range after[s.Layout.Segments[0].Start:s.Layout.Segments[0].End] {
		total += x
	}
	if math.Abs(total-float64(s.Layout.Segments[0].Len()-1)) > 1e-6*total {
		t.Errorf("with row 3 dropped, the first image hands out %v, want %d (one query fewer)", total, s.Layout.Segments[0].Len()-1)
	}
}

// BenchmarkReceived: the ranking of a token drop at the 8B's 4,096 patches (64 x 64), the
// AVX-512 column path (where the CPU has it) against the float64 rows.
func BenchmarkReceived(b *testing.B) {
	s := store8BOf(b, 64, 64, 1)
	qk, _ := s.QK(0)
	ab := attnBlock{qk: qk, d: s.Hidden, hd: s.HeadDim, heads: s.Heads, scale: s.attnScale()}
	var all []int
	for q := range s.Layout.Rows() {
		all = append(all, q)
	}
	ctx := context.Background()
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.receivedRows(ctx, ab, 0, all); err != nil {
				b.Fatal(err)
			}
		}
	})
	if !kernel.UseAVX512 {
		return
	}
	b.Run("cols", func(b *testing.B) {
		for b.Loop() {
			if _, err := ab.receivedCols(ctx, s.Layout.SegmentsOf(0), s.Layout.Rows()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
