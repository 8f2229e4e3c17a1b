package main

// gui.go opens the window: the only file that imports fyne's app package (it pulls in
// GL), so ui/ stays testable headless.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/turbospark/inspector/assets"
	"github.com/turbospark/inspector/ui"
)

func cmdGUI(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	dir := fs.String("checkpoint", "", "checkpoint directory (default: the embedded demo)")
	image := fs.String("image", "", "image file (default: the embedded demo photo)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := haveDisplay(); err != nil {
		return err
	}
	if *dir == "" || *image == "" {
		demoDir, photo, err := assets.Demo()
		if err != nil {
			return fmt.Errorf("unpacking the demo: %v", err)
		}
		if *dir == "" {
			*dir = demoDir
		}
		if *image == "" {
			*image = photo
		}
	}
	a := fyneapp.NewWithID("com.turbospark.inspector")
	w := a.NewWindow(ui.Title)
	ctl := ui.NewController(fyne.Do, windowBackends())
	in := ui.NewInspector(w, ctl, a.Preferences())
	in.OnFinished = func(*ui.Snapshot) { reportReady(in) }
	w.Resize(fyne.NewSize(1440, 900))
	ctl.Open(*dir, *image, ctl.Backends().DefaultSettings())
	w.ShowAndRun()
	ctl.Close()
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

// reportReady tells a watching script (the smoke test) that the first run finished and
// where the image view is, in window coordinates.
func reportReady(in *ui.Inspector) {
	pos, size := in.ImageViewBounds()
	fmt.Fprintf(os.Stderr, "inspector: ready; image view at %.0f,%.0f size %.0fx%.0f\n", pos.X, pos.Y, size.Width, size.Height)
}
