package geom

import "testing"

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
			seg := l.SegmentOf(i)
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
