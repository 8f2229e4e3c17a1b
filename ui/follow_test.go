package ui

// follow_test.go: the map follows the pointer — while "follow mouse" is on (or Shift is
// held) the hovered patch is the query, a burst of moves is drawn once at its last patch, and
// the frame-time probe times each followed hover from its pointer event to the paint of its
// map (and to the frame's end). The mutations each test catches are listed with it.

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// Follow: while on, the hovered patch is the query; off, only with Shift held; moves before
// the redraw fold into one. Catches: the toggle ignored, Shift ignored, the overlay not
// following the query, a redraw per crossed patch.
func TestFollowMouse(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	s := in.Snap
	g := patchGrid(s)
	a, b, c := g.At(2, 3), g.At(10, 20), g.At(15, 5)
	move := func(patch int, mods fyne.KeyModifier) {
		p.view.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: hmPointAt(t, h, patch)}, Modifier: mods})
		h.pump("the follow redraw", func() bool { return !p.followPending })
		h.settle()
	}
	move(a, 0)
	if in.Sel.Query == a {
		t.Fatal("the query followed the mouse with follow off")
	}
	p.follow.SetChecked(true)
	move(b, 0)
	want, _ := s.Probes.AttentionRowMean(in.Sel.Block, b)
	if in.Sel.Query != b || !slices.Equal(p.values, want) || p.view.Selected() != b {
		t.Errorf("follow on: query %d (want %d), overlay is its row: %v", in.Sel.Query, b, slices.Equal(p.values, want))
	}
	p.follow.SetChecked(false)
	move(c, 0)
	if in.Sel.Query != b {
		t.Errorf("follow off: the query moved to %d", in.Sel.Query)
	}
	move(c, fyne.KeyModifierShift)
	if in.Sel.Query != c {
		t.Errorf("Shift held: query %d, want %d", in.Sel.Query, c)
	}
	// GLFW's hover events carry no modifiers: Shift is tracked from its own key events, and
	// pressing it over a patch makes that patch the query at once.
	move(a, 0)
	in.keyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	h.pump("the follow redraw", func() bool { return !p.followPending })
	if in.Sel.Query != a {
		t.Errorf("Shift pressed over patch %d: query %d", a, in.Sel.Query)
	}
	move(b, 0)
	if in.Sel.Query != b {
		t.Errorf("Shift held (key events only): query %d, want %d", in.Sel.Query, b)
	}
	in.keyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	move(c, 0)
	if in.Sel.Query != b {
		t.Errorf("Shift released: the query moved to %d", in.Sel.Query)
	}
	// a burst of pointer moves (one GL tick's events): the first is drawn in the event, the
	// rest fold into one redraw after it, at the last patch (the one between is never drawn:
	// its rows are never asked for)
	p.follow.SetChecked(true)
	d, e, f := g.At(4, 4), g.At(8, 12), g.At(12, 16)
	time.Sleep(followGap)
	p.view.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: hmPointAt(t, h, d)}})
	first := in.Sel.Query
	// the view's callback for the next moves of the burst, as the GL driver's event loop
	// calls it (the test driver's MouseMoved renders, which takes longer than a burst's gap)
	p.view.OnHoverMods(e, 0)
	p.view.OnHoverMods(f, 0)
	h.pump("the folded redraw", func() bool { return !p.followPending })
	h.settle()
	drewE := in.maps.rows.Has(s.Probes, in.Sel.Block, e)
	if first != d || in.Sel.Query != f || drewE {
		t.Errorf("after a burst over d, e, f: query %d in the event (want d = %d), then %d (want f = %d); e drawn: %v", first, d, in.Sel.Query, f, drewE)
	}
}

// The frame-time probe logs each followed hover once, from the pointer event to the paint of
// its map, naming what was drawn, and sums the frames up. Catches: a time taken when the map
// arrives (it would miss the probe's work), a frame logged twice, no log at all.
func TestFrameLogTimesFollowedHovers(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	var out strings.Builder
	log := in.LogFrames(&out)
	p.follow.SetChecked(true)
	g := patchGrid(in.Snap)
	for i, patch := range []int{g.At(2, 3), g.At(10, 20)} {
		p.view.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: hmPointAt(t, h, patch)}})
		h.pump("the follow redraw", func() bool { return !p.followPending })
		h.settle()
		h.win.Canvas().Capture() // the paint
		h.pump("the frame's end", func() bool { return strings.Count(out.String(), "frame: ") > i })
		h.win.Canvas().Capture() // a frame with nothing new: not timed
		h.settle()
		if n := strings.Count(out.String(), "frame: "); n != i+1 {
			t.Fatalf("after %d hovers: %d frames logged:\n%s", i+1, n, out.String())
		}
	}
	lines := regexp.MustCompile(`frame: ([0-9.]+) ms from hover to paint, ([0-9.]+) ms to the frame's end \(attention, mean of heads, (\d+) patches\)`).FindAllStringSubmatch(out.String(), -1)
	if len(lines) != 2 {
		t.Fatalf("the lines do not say what was drawn:\n%s", out.String())
	}
	for _, m := range lines {
		painted, _ := strconv.ParseFloat(m[1], 64)
		ended, _ := strconv.ParseFloat(m[2], 64)
		if m[3] != strconv.Itoa(in.Snap.Layout.Rows()) || painted <= 0 || ended < painted {
			t.Errorf("frame line %q: the frame ends after its paint, which comes after the hover, on this page", m[0])
		}
	}
	if s := log.Summary(); !strings.Contains(s, "2 hovers") || strings.Count(s, "median") != 2 {
		t.Errorf("summary %q", s)
	}
	// A move whose rows are not in yet (held at the gate, as while a block runs): the last
	// map stays, marked, and is not timed; the new map's frame is, from the move, when it
	// lands.
	h.in.Ctl.Gate().Hold()
	p.view.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: hmPointAt(t, h, g.At(6, 7))}})
	const held = 50 * time.Millisecond
	time.Sleep(held)
	h.win.Canvas().Capture()
	for len(h.ui) > 0 { // what is queued, without waiting for the held probe
		(<-h.ui)()
	}
	if !strings.Contains(p.caption.Text, "computing the new map") || strings.Count(out.String(), "frame: ") != 2 {
		t.Fatalf("rows held back: caption %q; the marked old map must not be timed:\n%s", p.caption.Text, out.String())
	}
	h.in.Ctl.Gate().Release()
	h.pump("the held rows", func() bool { return !strings.Contains(p.caption.Text, "computing") })
	h.win.Canvas().Capture()
	h.pump("the frame's end", func() bool { return strings.Count(out.String(), "frame: ") == 3 })
	m := regexp.MustCompile(`frame: ([0-9.]+) ms from hover to paint`).FindAllStringSubmatch(out.String(), -1)
	if d, _ := strconv.ParseFloat(m[2][1], 64); d < ms(held) {
		t.Errorf("the held map's frame: %.1f ms from the move, less than the %v its rows were held", d, held)
	}
}
