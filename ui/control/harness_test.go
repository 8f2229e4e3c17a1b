package control_test

// harness_test.go: the controller without a window. Its UI callbacks queue up and the test
// goroutine runs them (pump), as fyne.Do's loop runs them in the app; the harness keeps the
// last snapshot posted and every status line said.

import (
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/ui/control"
)

const (
	demoDir   = "../../assets/demo"
	demoPhoto = "../../assets/sample.png"
)

// pumpDeadline bounds one wait of pump.
const pumpDeadline = time.Minute

type harness struct {
	t        *testing.T
	ui       chan func()
	ctl      *control.Controller
	snap     *control.Snapshot // the last snapshot posted
	statuses []string          // every status line said, in order
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessOn(t, control.CPUOnly(func(threads int) backend.Backend { return cpu.New(threads) }))
}

// newHarnessOn starts a controller on the given backends.
func newHarnessOn(t *testing.T, backends control.Backends) *harness {
	t.Helper()
	h := &harness{t: t, ui: make(chan func(), 1024)}
	h.ctl = control.NewController(func(f func()) { h.ui <- f }, backends)
	h.ctl.OnSnapshot = func(s *control.Snapshot) { h.snap = s }
	h.ctl.OnStatus = func(s control.Status) { h.statuses = append(h.statuses, s.Text) }
	t.Cleanup(h.ctl.Close)
	return h
}

// open opens a checkpoint and an image under the current settings, as the window does.
func (h *harness) open(dir, image string) { h.ctl.Open(dir, image, h.ctl.Settings()) }

// openDemo runs the demo to its end.
func (h *harness) openDemo() {
	h.open(demoDir, demoPhoto)
	h.pump("the demo run to finish", func() bool { return h.snap != nil && h.snap.Finished })
}

// said reports whether a status line containing every one of want was said.
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

// pump runs queued UI work until cond holds.
func (h *harness) pump(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(pumpDeadline)
	for !cond() {
		select {
		case f := <-h.ui:
			f()
		case <-deadline:
			last := ""
			if n := len(h.statuses); n > 0 {
				last = h.statuses[n-1]
			}
			h.t.Fatalf("timed out waiting for %s (status %q)", what, last)
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
