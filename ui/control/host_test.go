package control

// host_test.go: a Host for the tests: the UI goroutine is the test's, which runs what was
// posted (pump), as fyne.Do's loop runs it in the app.

import (
	"context"
	"testing"
	"time"
)

// pumpDeadline bounds one wait of pump.
const pumpDeadline = time.Minute

type testHost struct {
	t  *testing.T
	ui chan func()
}

func newTestHost(t *testing.T) *testHost { return &testHost{t: t, ui: make(chan func(), 1024)} }

func (h *testHost) ProbeContext() context.Context { return context.Background() }
func (h *testHost) BeginProbe() func()            { return func() {} }
func (h *testHost) Do(f func())                   { h.ui <- f }

// pump runs posted work until cond holds.
func (h *testHost) pump(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(pumpDeadline)
	for !cond() {
		select {
		case f := <-h.ui:
			f()
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
	h.drain()
}

// drain runs what is already posted.
func (h *testHost) drain() {
	for {
		select {
		case f := <-h.ui:
			f()
		default:
			return
		}
	}
}
