package ui

// prefs.go: what the window remembers between launches, in the app's Preferences: the
// window's size and the image | tabs split, the last checkpoint and image (a launch without
// flags reopens them while they exist), the folders the file dialogs start in, and the run
// settings a user sets in the Settings tab. Every reader checks what it reads: a value that
// no longer parses or exists gives the default, never a failed launch. With nil prefs
// (tests) nothing is kept.
//
// Invariant: the settings read back are ones the Settings form accepts (a backend offered
// here, a tile of at least 1, ...); the mutation that would silently break it: restoring
// the backend unchecked — a preferences file from a Mac would start Linux on "metal".

import (
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/control"
)

const (
	prefWidth            = "window.width"
	prefHeight           = "window.height"
	prefSplit            = "window.split"
	prefLastCheckpoint   = "last.checkpoint"
	prefLastImage        = "last.image"
	prefImageFolder      = "folder.images"
	prefCheckpointFolder = "folder.checkpoints"
	prefBackend          = "settings.backend"
	prefThreads          = "settings.threads"
	prefResidency        = "settings.residency"
	prefTile             = "settings.tile"
	prefMaxPixels        = "settings.max_pixels"
	prefTaps             = "settings.taps"
)

// memory is what the window remembers: the app's Preferences (nil: nothing is kept), the
// names the user gave the checkpoints it opened, and the demo's files (never remembered).
type memory struct {
	prefs fyne.Preferences
	names map[string]string // resolved checkpoint dir -> what the user named (a repo id, a path)
	demo  [2]string         // the demo's checkpoint and photo: never remembered as recent or last
}

// WindowSize is the size the window had when it was last closed, else def.
func (in *Inspector) WindowSize(def fyne.Size) fyne.Size {
	if in.memory.prefs == nil {
		return def
	}
	w, h := in.memory.prefs.Float(prefWidth), in.memory.prefs.Float(prefHeight)
	if w < 200 || h < 200 {
		return def
	}
	return fyne.NewSize(float32(w), float32(h))
}

// saveLayout keeps the window's size and split (on close).
func (in *Inspector) saveLayout() {
	if in.memory.prefs == nil {
		return
	}
	if s := in.Win.Canvas().Size(); s.Width >= 200 && s.Height >= 200 {
		in.memory.prefs.SetFloat(prefWidth, float64(s.Width))
		in.memory.prefs.SetFloat(prefHeight, float64(s.Height))
	}
	in.memory.prefs.SetFloat(prefSplit, in.chrome.split.Offset)
}

func (in *Inspector) savedSplit(def float64) float64 {
	if in.memory.prefs == nil {
		return def
	}
	if f := in.memory.prefs.FloatWithFallback(prefSplit, def); f > 0.05 && f < 0.95 {
		return f
	}
	return def
}

// LastOpened is the checkpoint (as the user named it) and image of the last run that
// loaded, if both still exist.
func (in *Inspector) LastOpened() (dir, image string, ok bool) {
	if in.memory.prefs == nil {
		return "", "", false
	}
	dir, image = in.memory.prefs.String(prefLastCheckpoint), in.memory.prefs.String(prefLastImage)
	if dir == "" || image == "" {
		return "", "", false
	}
	resolved, err := engine.ResolveCheckpoint(dir)
	if err != nil || !isDir(resolved) || !isFile(image) {
		return "", "", false
	}
	return dir, image, true
}

// rememberRun keeps what a run that loaded was opened with: the files (unless the demo)
// when they changed, and its settings.
func (in *Inspector) rememberRun(prev, s *Snapshot) {
	if in.memory.prefs == nil {
		return
	}
	if prev == nil || prev.CheckpointDir != s.CheckpointDir || prev.ImagePath != s.ImagePath {
		dir := in.checkpointName(s.CheckpointDir)
		if dir != in.memory.demo[0] && s.ImagePath != in.memory.demo[1] {
			in.memory.prefs.SetString(prefLastCheckpoint, dir)
			in.memory.prefs.SetString(prefLastImage, s.ImagePath)
		}
	}
	in.saveSettings(s.Settings)
}

func (in *Inspector) saveSettings(s engine.Settings) {
	p := in.memory.prefs
	p.SetString(prefBackend, s.Backend)
	p.SetInt(prefThreads, s.Threads)
	p.SetString(prefResidency, string(s.Residency))
	p.SetInt(prefTile, s.TileRows)
	p.SetInt(prefMaxPixels, s.MaxPixels)
	p.SetString(prefTaps, control.MoreTaps(s).String())
}

// openSettings are the settings a new open runs with: the current session's, else the
// ones last used (savedSettings).
func (in *Inspector) openSettings() engine.Settings {
	if in.Snap != nil {
		return in.Ctl.Settings()
	}
	return in.savedSettings()
}

// savedSettings are the last run's settings where each still holds here, else the defaults.
func (in *Inspector) savedSettings() engine.Settings {
	b := in.Ctl.Backends()
	s := b.DefaultSettings()
	p := in.memory.prefs
	if p == nil {
		return s
	}
	if v := p.String(prefBackend); b.Offers(v) {
		s.Backend = v
	}
	if v := p.IntWithFallback(prefThreads, s.Threads); engine.ThreadsBound.Check("", v) == nil {
		s.Threads = v
	}
	if v, err := engine.ParseResidency(p.String(prefResidency)); err == nil {
		s.Residency = v
	}
	if v := p.IntWithFallback(prefTile, s.TileRows); v != 0 && engine.TileBound.Check("", v) == nil {
		s.TileRows = v
	}
	if v := p.Int(prefMaxPixels); engine.MaxPixelsBound.Check("", v) == nil {
		s.MaxPixels = v
	}
	if v, err := engine.ParseTaps(p.String(prefTaps)); err == nil {
		s.Keep.Taps = v
	}
	return s
}

// rememberFolder keeps where a file dialog of this kind starts next time.
func (in *Inspector) rememberFolder(key, dir string) {
	if in.memory.prefs != nil && dir != "" {
		in.memory.prefs.SetString(key, dir)
	}
}

// folder is the remembered folder for key if it still is one ("" otherwise).
func (in *Inspector) folder(key string) string {
	if in.memory.prefs == nil {
		return ""
	}
	if d := in.memory.prefs.String(key); isDir(d) {
		return d
	}
	return ""
}

// parentDir is the absolute folder holding p ("" when p has none we can name).
func parentDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
