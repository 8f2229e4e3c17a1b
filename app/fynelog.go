package main

// fynelog.go: the window's log. Fyne reports through the standard logger (fyne.LogError:
// "Fyne error:  REASON", then "  Cause: ERR", then "  At: FILE:LINE"). One report is no
// error of ours or the user's: every file dialog looks up the XDG folders (Documents,
// Downloads, Music, Pictures, Videos) for its sidebar and logs "Getting favorite locations"
// when this computer defines fewer — Fyne then just shows fewer shortcuts. The GUI drops
// exactly those reports and passes every other line through unchanged. The other: Fyne
// watches its own preferences file and reloads it while it is saving it (on close), reading
// a file cut short ("Preferences load error", Cause: EOF); that report is dropped only with
// that cause — any other preferences error is shown.
//
// Invariant: only a report whose first line names a benign reason is dropped, with its own
// Cause and At lines; the mutation that would silently break it: dropping by "Fyne error"
// alone — a real failure (a dialog that cannot list a folder, a bad image in a widget)
// would vanish from stderr.

import (
	"io"
	"log"
	"os"
	"strings"
)

// benignFyneReasons are the Fyne reports the window drops.
var benignFyneReasons = []string{
	"Fyne error:  Getting favorite locations",
}

func quietFyneLog() { log.SetOutput(&fyneLogFilter{w: os.Stderr}) }

// fyneLogFilter is an io.Writer for the standard logger, which writes one entry per call
// (under its own lock).
type fyneLogFilter struct {
	w        io.Writer
	dropping bool   // inside a benign report: its Cause and At lines follow
	held     []byte // a preferences load error, shown unless its cause is a cut-short read
}

// prefsReloadRace is the first line of the report of Fyne reloading its preferences file
// while it writes it.
const prefsReloadRace = "Fyne error:  Preferences load error:"

func (f *fyneLogFilter) Write(p []byte) (int, error) {
	line := string(p)
	if f.held != nil {
		held := f.held
		f.held = nil
		if strings.Contains(line, "  Cause: EOF") || strings.Contains(line, "  Cause: unexpected end of JSON input") {
			f.dropping = true
			return len(p), nil
		}
		if _, err := f.w.Write(held); err != nil {
			return 0, err
		}
		f.dropping = false // the held report is shown: its own lines follow
	}
	if strings.Contains(line, prefsReloadRace) {
		f.held, f.dropping = append([]byte(nil), p...), false
		return len(p), nil
	}
	if isBenignFyne(line) {
		f.dropping = true
		return len(p), nil
	}
	if f.dropping && (strings.Contains(line, "  Cause: ") || strings.Contains(line, "  At: ")) {
		return len(p), nil
	}
	f.dropping = false
	return f.w.Write(p)
}

func isBenignFyne(line string) bool {
	for _, r := range benignFyneReasons {
		if strings.Contains(line, r) {
			return true
		}
	}
	return false
}
