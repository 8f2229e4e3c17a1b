// histogram_test.go: pins the histogram against its picture. Invariant: bin i is drawn at the
// i-th place with a height proportional to its count, a non-zero bin is never invisible, and
// the caption and range are written. The mutations these tests catch: bars in the wrong order
// or scaled to the wrong maximum, small bins rounded away, and a missing min/max label.
package widgets

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

func TestHistogramTallestBarAtLargestCount(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	h := NewHistogram()
	counts := make([]int, 24)
	for i := range counts {
		counts[i] = 10 + 3*i
	}
	counts[9] = 400 // the largest, well inside the range
	h.SetData(counts, -3, 5, "block 3 · out")
	win := stripTestWindow(t, h, 360, 160)
	img := win.Canvas().Capture()
	primary := th.Color(theme.ColorNamePrimary, theme.VariantDark)
	runs := barsFindRuns(img, 0, barsMatchAny(primary))
	if len(runs) != len(counts) {
		t.Fatalf("found %d bars, want %d", len(runs), len(counts))
	}
	tallest := 0
	for i, r := range runs {
		if r.height > runs[tallest].height {
			tallest = i
		}
	}
	if tallest != 9 {
		t.Fatalf("tallest bar is %d, want 9 (the largest count)", tallest)
	}
	ref := float64(runs[9].height) / 400
	for i, r := range runs {
		if want := float64(counts[i]) * ref; math.Abs(float64(r.height)-want) > 1.5 {
			t.Errorf("bin %d: height %d px, want %.1f", i, r.height, want)
		}
	}
}

func TestHistogramSmallBinsStayVisible(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	h := NewHistogram()
	h.SetData([]int{100000, 1, 0, 3, 0, 0, 0, 1}, 0, 8, "max |x|")
	win := stripTestWindow(t, h, 320, 120)
	runs := barsFindRuns(win.Canvas().Capture(), 0, barsMatchAny(th.Color(theme.ColorNamePrimary, theme.VariantDark)))
	if len(runs) != 4 {
		t.Fatalf("found %d bars, want 4 (every non-zero bin)", len(runs))
	}
	// Bin 7 (the outlier) sits at the right end: its bar starts in the last eighth.
	if last := runs[3]; float32(last.x0) < 320*6.9/8 {
		t.Errorf("the last bin is drawn at x=%d, not at the right end", last.x0)
	}
}

func TestHistogramLabelsAndHover(t *testing.T) {
	stripTestApp(t, theme.VariantDark)
	h := NewHistogram()
	h.SetData([]int{5, 7, 9, 2}, -1, 1, "block 0 · mlp out")
	win := stripTestWindow(t, h, 300, 120)
	r := test.WidgetRenderer(h).(*chartRenderer)
	var texts []string // the labels drawn this frame
	for i := 0; i < r.scene.nt; i++ {
		texts = append(texts, r.scene.texts[i].Text)
	}
	joined := strings.Join(texts, "|")
	for _, want := range []string{"block 0 · mlp out", "-1", "1", "0", "n = 23"} {
		found := false
		for _, s := range texts {
			found = found || s == want
		}
		if !found {
			t.Errorf("label %q not drawn; texts: %s", want, joined)
		}
	}
	if got := histThousands(1234567); got != "1,234,567" {
		t.Errorf("histThousands(1234567)=%q", got)
	}
	if got := h.HoverText(1); got != "[-0.5, 0) · 7" {
		t.Errorf("HoverText(1)=%q", got)
	}
	test.MoveMouse(win.Canvas(), fyne.NewPos(300*2.5/4, 60))
	if got := r.tip.text(); got != "[0, 0.5) · 9" {
		t.Errorf("tooltip over bin 2: %q", got)
	}
}

// In both themes, an activation-like histogram of 64 bins: one bar per non-empty bin in the
// theme's primary colour, the tallest at the largest count.
func TestHistogramBothThemes(t *testing.T) {
	stripTestThemes(t, func(th fyne.Theme, v fyne.ThemeVariant) {
		counts := make([]int, 64)
		lo, hi := float32(-4.2), float32(6.8)
		var nonEmpty, largest []int
		for i := range counts {
			x := float64(lo) + (float64(i)+0.5)*float64(hi-lo)/64
			counts[i] = int(5000 * math.Exp(-x*x/1.2))
		}
		counts[60] = 3 // a few massive activations
		for i, c := range counts {
			if c > 0 {
				nonEmpty = append(nonEmpty, i)
				if len(largest) == 0 || c > counts[largest[0]] {
					largest = []int{i}
				}
			}
		}
		h := NewHistogram()
		h.SetData(counts, lo, hi, "block 12 · output")
		win := stripTestWindow(t, h, 640, 150)
		runs := barsFindRuns(win.Canvas().Capture(), 0, barsMatchAny(th.Color(theme.ColorNamePrimary, v)))
		if len(runs) != len(nonEmpty) {
			t.Fatalf("%s theme: %d bars for %d non-empty bins", stripVariantName(v), len(runs), len(nonEmpty))
		}
		tallest := 0
		for i, r := range runs {
			if r.height > runs[tallest].height {
				tallest = i
			}
		}
		if nonEmpty[tallest] != largest[0] {
			t.Errorf("%s theme: the tallest bar is bin %d, the largest count bin %d", stripVariantName(v), nonEmpty[tallest], largest[0])
		}
	})
}
