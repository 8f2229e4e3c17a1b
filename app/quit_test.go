package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turbospark/inspector/internal/quitwatch"
)

// Quit always quits (issue 39): with Fyne's shutdown standing in as one that never returns
// (the tests' hook: the main goroutine waits forever once the window is gone), the process
// still ends, exit 0 and nothing on stderr, within 3 s of SIGTERM — and not before the watch's
// grace (which says the hang was there and the watch ended it). The window's close arms the
// same watch (control's TestWindowClosedTellsTheProgram).
func TestQuitEndsTheProcessWhenFyneHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no real window")
	}
	requireTools(t, "Xvfb")
	display := startXvfb(t)
	bin := buildInspector(t)
	env := append(windowEnv(display, filepath.Join(t.TempDir(), "home")), quitwatch.EnvTestHang+"=1")
	app := startApp(t, bin, env, "gui", "--demo")
	app.waitReady(t)
	start := time.Now()
	app.cmd.Process.Signal(syscall.SIGTERM)
	ended := make(chan error, 1)
	go func() {
		for l := range app.lines {
			if !strings.Contains(l, "ready;") {
				t.Errorf("stderr: %s", l)
			}
		}
		ended <- app.cmd.Wait()
	}()
	select {
	case err := <-ended:
		took := time.Since(start)
		if err != nil || took > 3*time.Second || took < quitwatch.Grace {
			t.Errorf("the process ended after %v with %v; want exit 0 within 3 s, after the grace of %v (the hang)", took.Round(time.Millisecond), err, quitwatch.Grace)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the process still runs 20 s after SIGTERM")
	}
}
