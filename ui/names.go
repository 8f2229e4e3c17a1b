package ui

// names.go: the window's machinery lives in ui/control (Fyne-free: the controller, the
// what-if jobs, the backends offered, the row service); these are its names as the app and
// the panels here use them. Invariant: each is control's own type (an alias), never a copy
// or a wrapper with behaviour of its own. The mutation that would silently break it: a ui
// Snapshot type of its own — the app's OnFinished would get one the controller never posts.

import (
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/ui/control"
)

type (
	Controller      = control.Controller
	Snapshot        = control.Snapshot
	Status          = control.Status
	Backends        = control.Backends
	CompareResult   = control.CompareResult
	CompareProgress = control.CompareProgress
	WhatIfResult    = control.WhatIfResult
	WhatIfProgress  = control.WhatIfProgress
	SweepResult     = control.SweepResult
)

// NewController starts the controller's worker (control.NewController): do runs a func on
// the UI goroutine (fyne.Do); backends are what this machine runs.
func NewController(do func(func()), backends Backends) *Controller {
	return control.NewController(do, backends)
}

// MachineBackends is what this machine offers, as the backend registry surveys it now
// (control.MachineBackends).
func MachineBackends() Backends { return control.MachineBackends() }

// CPUOnly offers the registry's fallback backend (the CPU) made by newCPU (control.CPUOnly).
func CPUOnly(newCPU func(threads int) backend.Backend) Backends { return control.CPUOnly(newCPU) }
