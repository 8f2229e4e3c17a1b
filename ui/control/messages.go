package control

// messages.go: how the controller says what a run is — what a settings change re-runs and
// why, the notes the status line keeps (why the backend is not the one asked for, what the
// image is to transformers), the run's interventions named in the status and the captions —
// and the names of the taps a run keeps beyond the window's own.
//
// Invariant: a run that is not the plain tower's says so in every status and caption
// (InterventionsSuffix). The mutation that would silently break it: a status line built
// without the suffix — a map of an ablated tower would read as the model's own.

import (
	"fmt"
	"strings"

	"github.com/turbospark/inspector/engine"
)

// ChangeMessage says what a settings change re-runs and why.
func ChangeMessage(old, s engine.Settings) string {
	var what []string
	if old.TileRows != s.TileRows {
		what = append(what, fmt.Sprintf("tile %d → %d", old.TileRows, s.TileRows))
	}
	if old.Residency != s.Residency {
		what = append(what, fmt.Sprintf("residency %s → %s", old.Residency, s.Residency))
	}
	if old.Backend != s.Backend {
		what = append(what, fmt.Sprintf("backend %s → %s", old.Backend, s.Backend))
	}
	if old.Threads != s.Threads {
		what = append(what, fmt.Sprintf("threads %d → %d", old.Threads, s.Threads))
	}
	if old.MaxPixels != s.MaxPixels {
		what = append(what, fmt.Sprintf("max pixels %d → %d (a new page)", old.MaxPixels, s.MaxPixels))
	}
	if a, b := MoreTaps(old), MoreTaps(s); a != b {
		what = append(what, fmt.Sprintf("more taps %s → %s", KeptNames(a), KeptNames(b)))
	}
	interventions := false
	if a, b := InterventionsOf(old), InterventionsOf(s); a != b {
		what = append(what, fmt.Sprintf("%s → %s", a, b))
		interventions = true
	}
	if len(what) == 0 {
		return "same settings: re-running from block 0"
	}
	why := "every block's timing depends on it; outputs do not"
	switch {
	case interventions:
		why = "what is done to the tower changes"
	case old.MaxPixels != s.MaxPixels || old.Backend != s.Backend:
		why = "the page or the arithmetic changes"
	}
	return fmt.Sprintf("%s: re-running from block 0 (%s)", strings.Join(what, ", "), why)
}

// MoreTaps are the taps s keeps beyond what the window always keeps.
func MoreTaps(s engine.Settings) engine.TapSet { return s.Keep.Set() &^ engine.ProbeTaps }

// noteSuffix is the notes the status line keeps while the run is shown: why the backend is not
// the one asked for, what the image is to transformers (a 16-bit gray PNG).
func noteSuffix(notes ...string) string {
	var s string
	for _, n := range notes {
		if n != "" {
			s += " — " + n
		}
	}
	return s
}

// InterventionsSuffix names the run's interventions in the status and the image's caption:
// the run is not the plain tower's.
func InterventionsSuffix(s engine.Settings) string {
	out := ""
	for _, iv := range s.Interventions() {
		out += " · " + iv.Name
	}
	return out
}

// KeptNames lists kept taps for people ("none" for none).
func KeptNames(s engine.TapSet) string {
	if s == 0 {
		return "none"
	}
	return strings.ReplaceAll(s.String(), ",", ", ")
}

// InterventionsOf names s's interventions ("No intervention" when there is none).
func InterventionsOf(s engine.Settings) string {
	var names []string
	for _, iv := range s.Interventions() {
		names = append(names, iv.Name)
	}
	if len(names) == 0 {
		return "No intervention"
	}
	return strings.Join(names, ", ")
}
