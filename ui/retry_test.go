package ui

// retry_test.go: where Metal failed its start-up probe, the window runs on the CPU and says
// why on the status line; Settings offers Retry Metal, which probes again off the UI
// goroutine and offers Metal once it passes.

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
)

func TestMetalProbeFailureSaidAndRetried(t *testing.T) {
	newCPU := func(threads int) backend.Backend { return cpu.New(threads) }
	ok := CPUOnly(newCPU)
	ok.Names = []string{"metal", "cpu"}
	ok.New = func(name string, threads int) (backend.Backend, error) { return cpu.New(threads), nil }
	retries := 0
	failed := CPUOnly(newCPU)
	failed.Unavailable = map[string]string{"metal": "the Metal start-up probe was killed by SIGABRT"}
	failed.Notes = map[string]string{"cpu": "running on the CPU: the Metal start-up probe was killed by SIGABRT"}
	failed.Retry = func() (Backends, error) {
		retries++
		if retries == 1 {
			return failed, errors.New("the Metal start-up probe was killed by SIGABRT again")
		}
		return ok, nil
	}
	h := newHarnessOn(t, failed)
	h.in.OpenFiles(demoDir, demoPhoto)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, "done:") || !strings.Contains(st, "killed by SIGABRT") {
		t.Errorf("status %q, want the run's status with why the CPU runs", st)
	}
	f := h.in.panels.settings.form
	if f.retry.Hidden || f.why.Hidden || !strings.Contains(f.why.Text, "SIGABRT") {
		t.Fatalf("settings: retry hidden %v, why %q", f.retry.Hidden, f.why.Text)
	}
	test.Tap(f.retry)
	h.pump("the retry", func() bool { return retries == 1 && !f.retry.Disabled() })
	if !strings.Contains(h.in.panels.toolbar.status.Text, "again") || f.backends.Offers("metal") {
		t.Errorf("a failed retry: status %q, metal offered %v", h.in.panels.toolbar.status.Text, f.backends.Offers("metal"))
	}
	test.Tap(f.retry)
	h.pump("the second retry", func() bool { return retries == 2 && f.backends.Offers("metal") })
	if !f.retry.Hidden || !f.why.Hidden || len(f.backend.Options) != 2 || !strings.Contains(h.in.panels.toolbar.status.Text, "Metal passed") {
		t.Errorf("after a retry that passed: retry hidden %v, why %q, options %v, status %q", f.retry.Hidden, f.why.Text,
			f.backend.Options, h.in.panels.toolbar.status.Text)
	}
	if !h.in.Ctl.Backends().Offers("metal") {
		t.Error("the controller still runs the old backends")
	}
}
