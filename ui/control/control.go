// Package control is the inspector window's machinery without the window: what drives the
// engine off the UI goroutine and serves the panels what they draw. It imports no fyne.io
// package (nofyne_test.go checks it), so all of it runs and is tested without a display; the
// package ui above it holds the widgets.
//
// control.go: the Host, what a background probe needs of the window's controller. Invariant:
// every probe computed off the UI goroutine runs under its run's context (ProbeContext:
// cancelled when the run is replaced), registers with the controller's gate (BeginProbe: Run
// all waits for begun work when it lends the window time), and reaches the panels only
// through Do (the UI goroutine, never after the window closed). The mutation that would
// silently break it: a probe started on context.Background() — replacing the run would not
// stop it, and a 27-block computation for the old page would hold the cores the new run
// needs.
package control

import "context"

// Host is what a background probe needs of the window's controller.
type Host interface {
	// ProbeContext is the context of the current run's probes: cancelled when that run is
	// replaced or the window closes; it carries the controller's gate.
	ProbeContext() context.Context
	// BeginProbe registers a probe's work with the gate; end when it is done.
	BeginProbe() (end func())
	// Do runs f on the UI goroutine, unless the window is closing.
	Do(f func())
}
