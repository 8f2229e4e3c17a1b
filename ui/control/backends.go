package control

// backends.go: which compute backends the window offers, which one it starts on, and how
// to make one. MachineBackends builds it from the backend registry (engine/backend/registry.go:
// what really works on this machine, Metal only after a first pass on the GPU gave exact
// numbers); tests hand the controller their own.
//
// Invariant: the settings forms offer exactly Names and the first is the default; a
// backend that is not offered is listed in Unavailable with the reason, which the forms
// show. Mutation that would silently break it: offering every backend by name — Linux
// would list Metal and fail on Apply.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
)

// Backends is the set of compute backends this machine runs.
type Backends struct {
	Names       []string          // offered, the default first
	Unavailable map[string]string // not offered here: name -> why
	New         func(name string, threads int) (backend.Backend, error)
	// Notes are said on the status line while a backend runs: for the CPU, why it runs where
	// a user would expect Metal (a Mac whose Metal failed its start-up probe); for Metal, the
	// kernel families that run their fallbacks. Empty elsewhere.
	Notes map[string]string
	// Retry probes again what failed (nil when nothing can be retried) and returns the
	// backends as they are then, with the probe's error.
	Retry func() (Backends, error)
}

// MachineBackends is what this machine offers, as the registry surveys it now (auto's choice
// first), made by the registry; its Retry asks the registry again.
func MachineBackends() Backends {
	o := backend.Survey()
	b := Backends{Names: o.Names, Unavailable: o.Unavailable, New: backend.New}
	if len(o.Notes) > 0 {
		b.Notes = o.Notes
	}
	if o.Retry != nil {
		b.Retry = func() (Backends, error) {
			err := o.Retry()
			return MachineBackends(), err
		}
	}
	return b
}

// CPUOnly offers the registry's fallback backend (the CPU) made by newCPU (tests).
func CPUOnly(newCPU func(threads int) backend.Backend) Backends {
	fallback := backend.FallbackName()
	return Backends{Names: []string{fallback}, New: func(name string, threads int) (backend.Backend, error) {
		if name != fallback {
			return nil, fmt.Errorf("backend %q is not available here", name)
		}
		return newCPU(threads), nil
	}}
}

// Default is the backend a new window runs on.
func (b Backends) Default() string {
	if len(b.Names) == 0 {
		return backend.FallbackName()
	}
	return b.Names[0]
}

// Offers says whether name is offered.
func (b Backends) Offers(name string) bool { return slices.Contains(b.Names, name) }

// DefaultSettings are the default backend, mapped weights, the default tile, every core.
func (b Backends) DefaultSettings() engine.Settings { return engine.DefaultSettings(b.Default()) }

// ComparePair is what Compare starts with: the fallback (the CPU) against the default where
// they differ (Metal where it runs: where a backend diverges is the first question), else the
// default tile against a 4x larger one (which must not change a bit).
func (b Backends) ComparePair() (engine.Settings, engine.Settings) {
	a, c := b.DefaultSettings(), b.DefaultSettings()
	if fallback := backend.FallbackName(); b.Default() != fallback && b.Offers(fallback) {
		a.Backend = fallback
		return a, c
	}
	c.TileRows = 4 * a.TileRows
	return a, c
}

// UnavailableNote is one line on what is not offered and why ("" when everything is).
func (b Backends) UnavailableNote() string {
	var names []string
	for name := range b.Unavailable {
		names = append(names, name)
	}
	sort.Strings(names)
	var parts []string
	for _, name := range names {
		parts = append(parts, name+" is not offered: "+b.Unavailable[name])
	}
	return strings.Join(parts, "; ")
}
