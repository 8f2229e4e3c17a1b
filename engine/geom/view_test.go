package geom

import (
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
)

// A drop after block 1 shapes blocks 2 and on only: block 1 (and its replay, Held aside) keeps
// the page's rows, segments and keys; later blocks run the kept rows, their segments cut and
// renumbered, the dropped rows masked and dropped.
func TestViewsDropShapesOnlyLaterBlocks(t *testing.T) {
	lay, err := NewLayout(2, []Grid{{1, 4, 4}, {1, 2, 4}}) // frames of 16 and 8 rows
	if err != nil {
		t.Fatal(err)
	}
	v := NewViews(lay, 4)
	kept := []int{0, 1, 2, 3, 16, 17, 18, 19}
	if err := v.Drop(1, kept); err != nil {
		t.Fatal(err)
	}
	for b := range 2 {
		if w := v.Of(b); w.Rows != nil || w.Dropped != nil || w.Masked != nil || !slices.Equal(w.Segments, lay.Segments) {
			t.Errorf("block %d (before the drop's next block): %+v", b, w)
		}
	}
	w := v.Of(2)
	want := []backend.Segment{{Start: 0, End: 4}, {Start: 4, End: 8}}
	if !slices.Equal(w.Rows, kept) || !slices.Equal(w.Segments, want) || !w.Dropped[4] || w.Dropped[16] || !w.Masked[4] {
		t.Errorf("block 2: rows %v segments %v", w.Rows, w.Segments)
	}
	if h := v.Held(1); !slices.Equal(h.Segments, want) {
		t.Errorf("block 1 over the held rows: %v, want %v", h.Segments, want)
	}
	if after, rows := v.DropAfter(); after != 1 || !slices.Equal(rows, kept) {
		t.Errorf("DropAfter = %d, %v", after, rows)
	}
}

// A key mask from block 1: earlier blocks see every key; later ones gather the kept keys with
// each segment's key range; a frame left with no key is refused, naming the mask and block,
// and leaves the views unmasked.
func TestViewsMaskKeys(t *testing.T) {
	lay, err := NewLayout(2, []Grid{{1, 2, 2}, {1, 2, 2}}) // frames of 4 rows
	if err != nil {
		t.Fatal(err)
	}
	v := NewViews(lay, 3)
	masked := []bool{true, false, false, true, false, false, false, false}
	if err := v.MaskKeys(1, masked, "key mask rows:0,3@1"); err != nil {
		t.Fatal(err)
	}
	if w, _ := v.Of(0).Keyed(); w.Keys != nil || w.Masked != nil {
		t.Errorf("block 0 masks %v", w.Masked)
	}
	w, err := v.Of(1).Keyed()
	if err != nil {
		t.Fatal(err)
	}
	wantSegs := []backend.Segment{{Start: 0, End: 4, KeyStart: 0, KeyEnd: 2}, {Start: 4, End: 8, KeyStart: 2, KeyEnd: 6}}
	if !slices.Equal(w.Keys, []int{1, 2, 4, 5, 6, 7}) || !slices.Equal(w.Segments, wantSegs) {
		t.Errorf("block 1: keys %v segments %v", w.Keys, w.Segments)
	}
	all := []bool{true, true, true, true, false, false, false, false}
	v2 := NewViews(lay, 3)
	err = v2.MaskKeys(2, all, "key mask rows:0,1,2,3@2")
	if err == nil || !strings.Contains(err.Error(), "key mask rows:0,1,2,3@2: it masks every patch of the image of rows 0-3 in block 2") {
		t.Errorf("a frame with no key: %v", err)
	}
	if v2.MasksKeys() {
		t.Error("a refused mask stays on the views")
	}
}
