package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/turbospark/inspector/engine"
)

// TestSettingsFormUsesTheEngineBounds: the form's numbers go through engine's bounds (the one
// check the CLI and Compare use too), and so do the preferences read at launch: max pixels
// 1,023 is refused by both, 1,024 taken; 0 threads and tile 0 are the defaults.
func TestSettingsFormUsesTheEngineBounds(t *testing.T) {
	test.NewTempApp(t)
	f := newSettingsForm(func(int) int64 { return 0 }, cpuOnly)
	f.load(engine.DefaultSettings("cpu"))
	for _, c := range []struct {
		field      string
		text, want string // want "": accepted
	}{
		{"max pixels", "1023", "max pixels 1023: want 1024 to"},
		{"max pixels", "1024", ""},
		{"max pixels", "many", `max pixels "many": want a whole number`},
		{"threads", "-1", "threads -1: want 1 to"},
		{"threads", "0", ""},
		{"tile", "0", ""},
		{"tile", "2000000", "MLP tile rows 2000000: want 1 to"},
	} {
		f.load(engine.DefaultSettings("cpu"))
		entry := map[string]interface{ SetText(string) }{"max pixels": f.maxPixels, "threads": f.threads, "tile": f.tile}[c.field]
		entry.SetText(c.text)
		_, err := f.Settings()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %q: %v, want %q", c.field, c.text, err, c.want)
		}
	}

	prefs := test.NewTempApp(t).Preferences()
	ctl := NewController(func(func()) {}, cpuOnly)
	t.Cleanup(ctl.Close)
	in := &Inspector{Ctl: ctl, memory: memory{prefs: prefs}}
	for _, c := range []struct{ saved, want int }{{1023, 0}, {1024, 1024}, {0, 0}} {
		prefs.SetInt(prefMaxPixels, c.saved)
		if got := in.savedSettings().MaxPixels; got != c.want {
			t.Errorf("max pixels saved as %d: restored %d, want %d", c.saved, got, c.want)
		}
	}
	prefs.SetInt(prefThreads, -3)
	if got := in.savedSettings().Threads; got != 0 {
		t.Errorf("threads saved as -3: restored %d, want 0 (every core)", got)
	}
}
