package ui

// harness_test.go: the inspector headless. The controller's UI callbacks queue up and the
// test goroutine runs them (pump), so every widget change happens on one goroutine, as
// fyne.Do guarantees in the app; settle waits for the probes computed off the UI goroutine.

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	_ "github.com/turbospark/inspector/internal/clocale" // the test binary, like the app, keeps Fyne quiet under LANG=C.UTF-8
	"github.com/turbospark/inspector/ui/control"
)

const (
	demoDir   = "../assets/demo"
	demoPhoto = "../assets/sample.png"
)

// harness runs the inspector headless: the controller's UI callbacks queue up and the test
// goroutine runs them (pump), so every widget change happens on one goroutine, as fyne.Do
// guarantees in the app.
type harness struct {
	t        *testing.T
	ui       chan func()
	in       *Inspector
	win      fyne.Window
	statuses []string // every status line shown, in order
}

// said reports whether a status line containing every one of want was shown.
func (h *harness) said(want ...string) bool {
	for _, st := range h.statuses {
		all := true
		for _, w := range want {
			all = all && strings.Contains(st, w)
		}
		if all {
			return true
		}
	}
	return false
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessOn(t, cpuOnly)
}

var cpuOnly = CPUOnly(func(threads int) backend.Backend { return cpu.New(threads) })

// newHarnessOn opens the window on the given backends.
func newHarnessOn(t *testing.T, backends Backends) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	h := &harness{t: t, ui: make(chan func(), 1024)}
	ctl := NewController(func(f func()) { h.ui <- f }, backends)
	h.win = a.NewWindow(Title)
	h.win.Resize(fyne.NewSize(1400, 900))
	h.in = NewInspector(h.win, ctl, a.Preferences())
	show := ctl.OnStatus
	ctl.OnStatus = func(s Status) { h.statuses = append(h.statuses, s.Text); show(s) }
	t.Cleanup(ctl.Close)
	return h
}

// pump runs queued UI work until cond holds.
// pumpDeadline bounds one wait of pump (ui/ runs natively only: make test-arm64 leaves it out).
const pumpDeadline = time.Minute

func (h *harness) pump(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(pumpDeadline)
	for !cond() {
		select {
		case f := <-h.ui:
			f()
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s (status %q)", what, h.in.panels.toolbar.status.Text)
		}
	}
	for { // drain what is already queued
		select {
		case f := <-h.ui:
			f()
		default:
			return
		}
	}
}

func (h *harness) openDemo() {
	h.in.OpenFiles(demoDir, demoPhoto)
	h.pump("the demo run to finish", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	h.settle()
}

// show selects a tab by its name, as a click on it does: a tab hidden while the run went on
// is drawn when it is shown (Inspector.refreshTab).
func (h *harness) show(name string) {
	h.t.Helper()
	for i, tab := range h.in.tabs.Items {
		if tab.Text == name {
			h.in.tabs.SelectIndex(i)
			return
		}
	}
	h.t.Fatalf("no tab %q", name)
}

// settle pumps until no probe computation is in flight (attention rows are computed off the
// UI goroutine, and land with a redraw).
func (h *harness) settle() {
	h.t.Helper()
	h.pump("the probes in flight", func() bool { return !h.in.maps.rows.Busy() })
}

// headStats are the row service's block x head statistics of the run shown.
func (h *harness) headStats() *control.HeadStats { return h.in.maps.rows.HeadStats(h.in.Snap.Probes) }

// tapPatch taps the image view where patch p is drawn.
func (h *harness) tapPatch(p int) {
	h.t.Helper()
	v := h.in.panels.image.view
	sz := v.Size()
	for y := float32(1); y < sz.Height; y += 2 {
		for x := float32(1); x < sz.Width; x += 2 {
			if v.PatchAt(fyne.NewPos(x, y)) == p {
				test.TapAt(v, fyne.NewPos(x, y))
				h.settle()
				return
			}
		}
	}
	h.t.Fatalf("patch %d is not drawn anywhere in the image view (%v)", p, sz)
}

func argmax(xs []float32) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

func maxOf(xs []float64, more ...float64) float64 {
	m := 0.0
	for _, x := range append(append([]float64(nil), xs...), more...) {
		m = max(m, x)
	}
	return m
}
