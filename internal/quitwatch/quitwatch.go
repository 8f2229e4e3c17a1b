// Package quitwatch ends the program once its window has closed, whatever the GUI toolkit's
// shutdown does: Fyne 2.7.1 can close every window on Quit and leave the main goroutine
// waiting on its event queue for good (fyne-io/fyne#5699), an idle process the user cannot
// see. Arm starts the watch when the window closes (Quit, Ctrl+Q, the close box, a stop
// signal); the orderly way (ShowAndRun returning, the controller closing, main returning) has
// Grace to end the process, then the watch ends it.
//
// Invariant: the watch never cuts a write short — an output being written (fsx.Temporaries)
// finishes first, within WriteBound, or is abandoned with its target as it was
// (fsx.RemoveTemporaries) — and it exits 0: the user asked to quit. Mutation that would
// silently break it: exiting without waiting for the temporaries — an export in progress at
// Quit would be lost (and its hidden temporary left beside the target).
package quitwatch

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/turbospark/inspector/internal/fsx"
)

// Grace is how long the orderly way has after the window closed; WriteBound, how long a write
// in progress then has to finish.
const (
	Grace      = 2 * time.Second
	WriteBound = 30 * time.Second
)

// EnvTestHang makes HangAfterWindow true in the build with the tests' hooks: the stand-in for
// Fyne's shutdown that never returns.
const EnvTestHang = "INSPECTOR_TEST_HANG_AFTER_WINDOW"

var armed atomic.Bool

// Arm starts the watch (once: later calls do nothing).
func Arm() {
	if armed.Swap(true) {
		return
	}
	go func() {
		time.Sleep(Grace)
		end(os.Exit)
	}()
}

// end waits for the writes in progress (at most WriteBound), removes what is left of them,
// and calls exit(0).
func end(exit func(int)) {
	for deadline := time.Now().Add(WriteBound); fsx.Temporaries() > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	fsx.RemoveTemporaries()
	exit(0)
}
