// bars_test.go: pins the timing bars against their picture. Invariant: bar heights are
// proportional to totals on one axis shared by both series, the slowest block per series is
// the largest total and is the one outlined. The mutations these tests catch: scaling each
// series to its own maximum, picking the slowest by its largest part (or the last block),
// hit-testing the wrong group, and a hover text that drops a part or the total.
package widgets

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

var barsTestColors = []color.Color{
	color.NRGBA{0xf5, 0x9e, 0x0b, 0xff}, // wait: amber
	color.NRGBA{0x3b, 0x82, 0xf6, 0xff}, // attention: blue
	color.NRGBA{0x10, 0xb9, 0x81, 0xff}, // MLP: green
}

func barsRows(parts ...[3]float64) [][]float64 {
	rows := make([][]float64, len(parts))
	for i, p := range parts {
		rows[i] = []float64{p[0], p[1], p[2]}
	}
	return rows
}

func TestBarsSlowestIsLargestTotal(t *testing.T) {
	stripTestApp(t, theme.VariantDark)
	b := NewBars([]string{"wait", "attention", "MLP"}, barsTestColors, "ms", nil)
	if b.Slowest(0) != -1 {
		t.Fatal("Slowest of no series should be -1")
	}
	b.SetSeries(
		// Block 0 has the largest single part (50), block 2 the largest total (60).
		Series{Name: "A", Rows: [][]float64{{0, 50, 1}, {1, 2, 3}, {20, 20, 20}, nil, {1, 1, 1}}},
		Series{Name: "B", Rows: [][]float64{{1, 1, 1}, {30, 30, math.NaN()}, {1, 1, 1}}},
	)
	if got := b.Slowest(0); got != 2 {
		t.Errorf("Slowest(A)=%d, want 2", got)
	}
	if got := b.Slowest(1); got != 1 {
		t.Errorf("Slowest(B)=%d, want 1 (NaN part is missing, not poison)", got)
	}
	if got := b.Slowest(2); got != -1 {
		t.Errorf("Slowest(2)=%d, want -1", got)
	}
	b.SetSeries(Series{Rows: [][]float64{nil, {math.NaN()}}})
	if got := b.Slowest(0); got != -1 {
		t.Errorf("Slowest of a series without data=%d, want -1", got)
	}
}

func TestBarsHoverText(t *testing.T) {
	stripTestApp(t, theme.VariantDark)
	b := NewBars([]string{"wait", "attention", "MLP"}, barsTestColors, "ms", nil)
	rows := make([][]float64, 8)
	rows[7] = []float64{1.2, 30.1, 41.0}
	b.SetSeries(Series{Name: "A", Rows: rows})
	want := "block 7 · A: wait 1.2 ms, attention 30.1 ms, MLP 41.0 ms = 72.3 ms"
	if got := b.HoverText(7); got != want {
		t.Errorf("HoverText(7)=%q\nwant        %q", got, want)
	}
	if got := b.HoverText(0); got != "block 0 · A: no data" {
		t.Errorf("HoverText(0)=%q", got)
	}
	if got := b.HoverText(8); got != "" {
		t.Errorf("HoverText out of range=%q", got)
	}
	rowsB := make([][]float64, 8)
	rowsB[7] = []float64{0.04, 30.1, 30.0}
	b.SetSeries(Series{Name: "A", Rows: rows}, Series{Name: "B", Rows: rowsB})
	want += "\nB: wait 0.04 ms, attention 30.1 ms, MLP 30.0 ms = 60.1 ms (−16.8%)"
	if got := b.HoverText(7); got != want {
		t.Errorf("compare HoverText(7)=%q\nwant                %q", got, want)
	}

	// The tooltip shows exactly that text while the pointer is over block 7.
	win := stripTestWindow(t, b, 500, 240)
	g := b.geom(b.Size(), b.Theme())
	x, w := g.groupX(7)
	test.MoveMouse(win.Canvas(), fyne.NewPos(x+w/2, 150))
	r := test.WidgetRenderer(b).(*chartRenderer)
	if got := r.tip.text(); got != want {
		t.Errorf("tooltip=%q", got)
	}
}

func TestBarsHeightsProportionalAndSlowestOutlined(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	got := -1
	b := NewBars([]string{"wait", "attention", "MLP"}, barsTestColors, "ms", func(i int) { got = i })
	totals := []float64{10, 20, 40, 5}
	b.SetSeries(Series{Name: "A", Rows: barsRows(
		[3]float64{1, 4, 5}, [3]float64{2, 8, 10}, [3]float64{4, 16, 20}, [3]float64{0.5, 2, 2.5})})
	win := stripTestWindow(t, b, 400, 300)
	img := win.Canvas().Capture()
	// Below the legend, whose swatches have the bars' colours.
	runs := barsFindRuns(img, int(b.geom(b.Size(), b.Theme()).legendH), barsMatchAny(barsTestColors...))
	if len(runs) != len(totals) {
		t.Fatalf("found %d bars, want %d: %+v", len(runs), len(totals), runs)
	}
	ref := float64(runs[2].height) / totals[2]
	for i, r := range runs {
		want := totals[i] * ref
		if math.Abs(float64(r.height)-want) > 1.5 {
			t.Errorf("bar %d: height %d px, want %.1f (total %v)", i, r.height, want, totals[i])
		}
	}
	// The slowest bar (block 2) is outlined in the foreground colour just above its top;
	// the others are not.
	fg := th.Color(theme.ColorNameForeground, theme.VariantDark)
	for i, r := range runs {
		p := stripPixel(img, float32(r.x0+r.x1)/2, float32(r.top-1))
		if outlined := stripClose(p, fg, 30); outlined != (i == 2) {
			t.Errorf("bar %d: pixel above top %v, outlined=%v", i, p, outlined)
		}
	}
	// A tap on a bar selects its block.
	for i, r := range runs {
		got = -1
		test.TapCanvas(win.Canvas(), fyne.NewPos(float32(r.x0+r.x1)/2, float32(r.top+2)))
		if got != i || b.Selected() != i {
			t.Errorf("tap on bar %d selected %d (Selected %d)", i, got, b.Selected())
		}
	}
}

func TestBarsCompareDrawsBothSeriesOnOneAxis(t *testing.T) {
	th := stripTestApp(t, theme.VariantDark)
	b := NewBars([]string{"wait", "attention", "MLP"}, barsTestColors, "ms", nil)
	a := []float64{10, 30, 20}
	bb := []float64{15, 10, 25}
	split := func(ts []float64) [][]float64 {
		rows := make([][]float64, len(ts))
		for i, x := range ts {
			rows[i] = []float64{0.1 * x, 0.4 * x, 0.5 * x}
		}
		return rows
	}
	b.SetSeries(Series{Name: "A", Rows: split(a)}, Series{Name: "B", Rows: split(bb)})
	win := stripTestWindow(t, b, 420, 300)
	img := win.Canvas().Capture()
	bg := th.Color(theme.ColorNameBackground, theme.VariantDark)
	var tinted []color.Color
	for _, c := range barsTestColors {
		tinted = append(tinted, stripMix(c, bg, barsTint))
	}
	// Below the legend, whose swatches have the bars' colours.
	plotTop := int(b.geom(b.Size(), b.Theme()).legendH)
	runsA := barsFindRuns(img, plotTop, barsMatchAny(barsTestColors...))
	runsB := barsFindRuns(img, plotTop, barsMatchAny(tinted...))
	if len(runsA) != 3 || len(runsB) != 3 {
		t.Fatalf("found %d A bars and %d B bars, want 3 and 3", len(runsA), len(runsB))
	}
	ref := float64(runsA[1].height) / a[1] // the tallest of all: A, block 1
	for i := range a {
		if runsB[i].x0 <= runsA[i].x1-1 {
			t.Errorf("block %d: B bar (x %d) not to the right of A bar (x end %d)", i, runsB[i].x0, runsA[i].x1)
		}
		if i+1 < len(a) && runsB[i].x1 > runsA[i+1].x0 {
			t.Errorf("block %d: B bar runs into the next group", i)
		}
		for _, c := range []struct {
			name string
			r    barsRun
			v    float64
		}{{"A", runsA[i], a[i]}, {"B", runsB[i], bb[i]}} {
			if want := c.v * ref; math.Abs(float64(c.r.height)-want) > 1.5 {
				t.Errorf("block %d %s: height %d px, want %.1f on the shared axis", i, c.name, c.r.height, want)
			}
		}
	}
	// Each series outlines its own slowest block: A's block 1, B's block 2.
	fg := th.Color(theme.ColorNameForeground, theme.VariantDark)
	outlined := func(r barsRun) bool {
		return stripClose(stripPixel(img, float32(r.x0+r.x1)/2, float32(r.top-1)), fg, 30)
	}
	for i := range a {
		if outlined(runsA[i]) != (i == 1) || outlined(runsB[i]) != (i == 2) {
			t.Errorf("block %d: outlined A=%v B=%v", i, outlined(runsA[i]), outlined(runsB[i]))
		}
	}
}

func TestBarsNiceStep(t *testing.T) {
	for _, c := range []struct{ top, step, max float64 }{
		{72.3, 20, 80}, {100, 20, 100}, {0.37, 0.1, 0.4}, {9, 2, 10}, {0, 1, 1},
	} {
		step, m := barsNiceStep(c.top, 5)
		if math.Abs(step-c.step) > 1e-9 || math.Abs(m-c.max) > 1e-9 {
			t.Errorf("barsNiceStep(%v,5)=(%v,%v), want (%v,%v)", c.top, step, m, c.step, c.max)
		}
	}
}

// barsDemo is a plausible 27-block run: pread wait at the start, attention ~30 ms, MLP ~40 ms;
// B is the same run with a smaller MLP row tile.
func barsDemo() (Series, Series) {
	a := Series{Name: "tile 256 · pread"}
	b := Series{Name: "tile 64 · mapped"}
	for i := 0; i < 27; i++ {
		f := float64(i)
		wait := 0.3 + 4*math.Exp(-f/3)
		att := 28 + 3*math.Sin(f*0.9)
		mlp := 38 + 4*math.Cos(f*0.5)
		if i == 17 {
			mlp += 14
		}
		a.Rows = append(a.Rows, []float64{wait, att, mlp})
		b.Rows = append(b.Rows, []float64{0.05, att * 0.98, mlp * 0.78})
	}
	return a, b
}

// In both themes, 27 blocks alone and compared: every bar of each series is drawn in its
// own colours (B's tinted toward the theme's background), and the tooltip over a group is
// its hover text.
func TestBarsBothThemes(t *testing.T) {
	stripTestThemes(t, func(th fyne.Theme, v fyne.ThemeVariant) {
		sa, sb := barsDemo()
		one := NewBars([]string{"weight wait", "attention", "MLP"}, barsTestColors, "ms", nil)
		one.SetSeries(sa)
		one.SetSelected(9)
		win := stripTestWindow(t, one, 900, 260)
		top := int(one.geom(one.Size(), one.Theme()).legendH)
		if runs := barsFindRuns(win.Canvas().Capture(), top, barsMatchAny(barsTestColors...)); len(runs) != 27 {
			t.Errorf("%s theme: %d bars drawn for 27 blocks", stripVariantName(v), len(runs))
		}

		two := NewBars([]string{"weight wait", "attention", "MLP"}, barsTestColors, "ms", nil)
		two.SetSeries(sa, sb)
		two.SetSelected(4)
		win2 := stripTestWindow(t, two, 900, 260)
		img := win2.Canvas().Capture()
		bg := th.Color(theme.ColorNameBackground, v)
		var tinted []color.Color
		for _, c := range barsTestColors {
			tinted = append(tinted, stripMix(c, bg, barsTint))
		}
		top = int(two.geom(two.Size(), two.Theme()).legendH)
		runsA, runsB := barsFindRuns(img, top, barsMatchAny(barsTestColors...)), barsFindRuns(img, top, barsMatchAny(tinted...))
		if len(runsA) != 27 || len(runsB) != 27 {
			t.Errorf("%s theme: compare draws %d A bars and %d B bars, want 27 and 27", stripVariantName(v), len(runsA), len(runsB))
		}
		g := two.geom(two.Size(), two.Theme())
		x, w := g.groupX(12)
		test.MoveMouse(win2.Canvas(), fyne.NewPos(x+w/2, 170))
		if got, want := test.WidgetRenderer(two).(*chartRenderer).tip.text(), two.HoverText(12); got != want || got == "" {
			t.Errorf("%s theme: tooltip over block 12 %q, want %q", stripVariantName(v), got, want)
		}
	})
}
