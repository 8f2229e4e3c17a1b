//go:build !nogui

package main

// gui.go opens the window: the only file that imports fyne's app package (it pulls in
// GL), so ui/ stays testable headless. It sets the main menu, restores the window's size,
// and opens what the flags name, else what was open last (while it exists), else the demo.
//
// Invariant: the "ready" line goes to stderr once, after the first run finished, and only when
// INSPECTOR_READY_LINE asks for it (the smoke test waits for it and reads the image view's
// place from it); the mutation that would
// silently break it: printing it from OnFinished unguarded — every Apply and Restart would
// repeat it, and a script reading the first line would still pass while the noise grows.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/turbospark/inspector/assets"
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/quitwatch"
	"github.com/turbospark/inspector/ui"
)

func cmdGUI(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gui")
	dir := fs.String("checkpoint", "", "checkpoint directory, or a Hugging Face repo id (owner/name[@revision]) in the local cache "+
		"(default: the last one opened, else the embedded demo)")
	image := fs.String("image", "", "image file (default: the last one opened, else the embedded demo photo)")
	demo := fs.Bool("demo", false, "open the embedded demo checkpoint on its photo, whatever was open last")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := haveDisplay(); err != nil {
		return err
	}
	if err := checkWindowAS(); err != nil {
		return err
	}
	if *dir != "" {
		if _, err := engine.ResolveCheckpoint(*dir); err != nil {
			return err // a repo id not in the cache: say where we looked, before any window
		}
	}
	quietFyneLog()
	fyneapp.SetMetadata(fyneMetadata(ui.Title, threadChecksAsked()))
	a := fyneapp.NewWithID(appID)
	w := a.NewWindow(ui.Title)
	ctl := ui.NewController(fyne.Do, ui.MachineBackends())
	in := ui.NewInspector(w, ctl, a.Preferences())
	if os.Getenv(readyEnv) != "" { // a watching script asked for it (the smoke test); never in normal use
		announceReady(in, os.Stderr)
	}
	var frames *ui.FrameLog
	if os.Getenv(frameTimesEnv) != "" { // an engineer asked: one line per follow-mouse frame, a summary at the end
		frames = in.LogFrames(os.Stderr)
	}
	w.SetMainMenu(in.MainMenu())
	w.Resize(in.WindowSize(fyne.NewSize(1280, 720)))
	if *demo && (*dir != "" || *image != "") {
		return fmt.Errorf("--demo opens the demo's own checkpoint and photo: leave out --checkpoint and --image")
	}
	if err := openAtLaunch(in, *dir, *image, *demo); err != nil {
		return err
	}
	ctl.OnWindowClosed = quitwatch.Arm // the process ends even where Fyne's shutdown does not
	quitOnSignals(a)
	w.ShowAndRun()
	if quitwatch.HangAfterWindow() {
		select {} // the tests' stand-in for a shutdown that never returns
	}
	ctl.Close()
	if frames != nil {
		fmt.Fprintln(os.Stderr, frames.Summary())
	}
	return nil
}

// quitOnSignals quits the window on SIGHUP (a closed terminal) as Fyne does on SIGINT and
// SIGTERM: on the UI goroutine, after an export being written there; the first signal arms
// quitwatch, so the process ends even if the window never closes. A second stop signal quits
// at once, removing the temporaries of writes in progress (their targets stay as they were).
func quitOnSignals(a fyne.App) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, stopSignals...)
	go func() {
		s := <-sig
		quitwatch.Arm() // whether or not the window gets to close
		if s == syscall.SIGHUP {
			fyne.Do(a.Quit)
		}
		s = <-sig
		fsx.RemoveTemporaries()
		os.Exit(exitCode(s))
	}()
}

// openAtLaunch opens the flags' files; what a flag leaves out, the last ones while they
// exist, else the embedded demo's (always unpacked: File ▸ Open demo gets back to it).
func openAtLaunch(in *ui.Inspector, dir, image string, demo bool) error {
	demoDir, photo, err := assets.Demo()
	if err != nil {
		return fmt.Errorf("unpacking the demo: %v", err)
	}
	in.SetDemo(demoDir, photo)
	if d, i, ok := in.LastOpened(); ok && !demo {
		if dir == "" {
			dir = d
		}
		if image == "" {
			image = i
		}
	}
	if dir == "" {
		dir = demoDir
	}
	if image == "" {
		image = photo
	}
	in.OpenFiles(dir, image)
	return nil
}

// haveDisplay refuses early, with a message instead of GLFW's panic, where no window can open.
func haveDisplay() error {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" {
		return nil
	}
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return fmt.Errorf("no display (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop session or under Xvfb, or use 'inspector run' for the CLI")
	}
	return nil
}

// readyEnv asks the window to announce on stderr that its first run finished (announceReady).
const readyEnv = "INSPECTOR_READY_LINE"

// frameTimesEnv turns the follow-mouse frame-time probe on (ui.FrameLog): each hover that
// moves the query, timed from the pointer event to the paint of its map, on stderr.
const frameTimesEnv = "INSPECTOR_FRAME_TIMES"

// announceReady tells a watching script (the smoke test), once, that the first run
// finished, where the image view and the Run all button are, in window coordinates, and the
// first run's span, work and time lent to the window (scripts/window-vs-cli.sh reads them).
func announceReady(in *ui.Inspector, w io.Writer) {
	var once sync.Once
	in.OnFinished = func(s *ui.Snapshot) {
		once.Do(func() {
			pos, size := in.ImageViewBounds()
			bpos, bsize, _ := in.ButtonBounds("Run all")
			var lent time.Duration
			for _, d := range s.WindowTime {
				lent += d
			}
			fmt.Fprintf(w, "inspector: ready; image view at %.0f,%.0f size %.0fx%.0f; Run all at %.0f,%.0f size %.0fx%.0f; "+
				"run span %.1f ms, work %.1f ms, lent to the window %.1f ms\n",
				pos.X, pos.Y, size.Width, size.Height, bpos.X, bpos.Y, bsize.Width, bsize.Height,
				s.Report.SpanMS(), s.Report.Totals.WallMS, engine.Millis(lent))
		})
	}
}
