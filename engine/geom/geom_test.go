package geom

import (
	"testing"

	"github.com/turbospark/inspector/engine/backend"
)

// Spec §3: each consecutive group of m*m rows is one merge window (TL, TR, BL, BR for m=2),
// windows row-major; Index inverts Pos for every row of every frame of every grid.
func TestMergeOrder(t *testing.T) {
	l, err := NewLayout(2, []Grid{{T: 1, H: 4, W: 4}})
	if err != nil {
		t.Fatal(err)
	}
	want := [4][4]int{{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}}
	for r := range 4 {
		for c := range 4 {
			if got := l.Index(0, 0, r, c); got != want[r][c] {
				t.Errorf("Index(0, 0, %d, %d) = %d, want %d", r, c, got, want[r][c])
			}
		}
	}
	for _, m := range []int{1, 2, 3} {
		l, err := NewLayout(m, []Grid{{T: 1, H: 6 * m, W: 4 * m}, {T: 2, H: 2 * m, W: 3 * m}, {T: 1, H: m, W: m}})
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, l.Rows())
		for i, p := range l.Pos {
			gi := l.GridOf[i]
			seg := l.FrameOf(i)
			t0 := 0 // the frame: which segment of this grid
			for _, s := range l.Segments {
				if s.End <= seg.Start && l.GridOf[s.Start] == gi {
					t0++
				}
			}
			if j := l.Index(gi, t0, p.Row, p.Col); j != i || seen[j] {
				t.Fatalf("merge %d: row %d at %+v of grid %d frame %d: Index gives %d", m, i, p, gi, t0, j)
			}
			seen[i] = true
		}
	}
	if _, err := NewLayout(2, []Grid{{T: 1, H: 3, W: 4}}); err == nil {
		t.Error("a grid whose height is not a multiple of the merge size was accepted")
	}
}

// SetWindows takes only windows that tile every frame in order; a windowed block then
// attends within its row's window, any other block within the frame.
func TestSetWindows(t *testing.T) {
	l, err := NewLayout(2, []Grid{{T: 1, H: 4, W: 4}, {T: 1, H: 2, W: 2}}) // frames 0..16, 16..20
	if err != nil {
		t.Fatal(err)
	}
	seg := func(a, b int) backend.Segment { return backend.Segment{Start: a, End: b} }
	bad := map[string][]backend.Segment{
		"a gap":             {seg(0, 8), seg(9, 16), seg(16, 20)},
		"short of the end":  {seg(0, 16)},
		"crossing a frame":  {seg(0, 12), seg(12, 20)},
		"an empty window":   {seg(0, 16), seg(16, 16), seg(16, 20)},
		"not from row zero": {seg(4, 16), seg(16, 20)},
	}
	for what, ws := range bad {
		if err := l.SetWindows(ws, []int{1}, 3); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
	if err := l.SetWindows([]backend.Segment{seg(0, 12), seg(12, 16), seg(16, 20)}, []int{3}, 3); err == nil {
		t.Error("block 3 of 3 accepted")
	}
	if l.AnyWindowed() {
		t.Fatal("a refused call left windows behind")
	}
	ws := []backend.Segment{seg(0, 12), seg(12, 16), seg(16, 20)}
	if err := l.SetWindows(ws, []int{1}, 3); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		block, row int
		want       backend.Segment
	}{{0, 13, seg(0, 16)}, {1, 13, seg(12, 16)}, {1, 3, seg(0, 12)}, {2, 3, seg(0, 16)}, {1, 17, seg(16, 20)}} {
		if got := l.SegmentOf(c.block, c.row); got != c.want {
			t.Errorf("block %d row %d: segment %v, want %v", c.block, c.row, got, c.want)
		}
	}
	if !l.Windowed(1) || l.Windowed(0) || l.Windowed(7) || !l.AnyWindowed() {
		t.Error("Windowed")
	}
}
