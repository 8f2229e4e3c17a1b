package ui

// controller_host.go: the Controller as the row service and every background probe see it
// (control.Host): the run's probe context, the gate, the way to the UI goroutine.
// Invariant: Do is the controller's do — nothing reaches a closed window. The mutation that
// would silently break it: Do calling toUI directly, past the quitting check.

import "github.com/turbospark/inspector/ui/control"

var _ control.Host = (*Controller)(nil)

// BeginProbe registers a probe's work with the gate (internal/par/gate.go); end when done.
func (c *Controller) BeginProbe() (end func()) { return c.gate.Begin() }

// Do runs f on the UI goroutine, unless the window is closing (do).
func (c *Controller) Do(f func()) { c.do(f) }
