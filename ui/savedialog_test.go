package ui

// savedialog_test.go: the real save dialog (Fyne's), driven as a user would: type a name,
// Save, answer Yes to "Overwrite?". Whatever name is typed, the dialog itself never creates,
// truncates or writes the file: an input typed into it stays as it was and the export says
// why it was refused; a new name is written by the export's atomic writer alone.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// dialogWidgets walks the top overlay of w for the file name entry (the dialog's only
// entry with a placeholder-free single line) and the buttons by label.
func dialogWidgets(w fyne.Window) (entries []*widget.Entry, buttons map[string]*widget.Button) {
	buttons = map[string]*widget.Button{}
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Entry:
			entries = append(entries, x)
		case *widget.Button:
			buttons[x.Text] = x
		}
		if c, ok := o.(*fyne.Container); ok {
			for _, k := range c.Objects {
				walk(k)
			}
		} else if wd, ok := o.(fyne.Widget); ok {
			for _, k := range test.WidgetRenderer(wd).Objects() {
				walk(k)
			}
		}
	}
	if top := w.Canvas().Overlays().Top(); top != nil {
		walk(top)
	}
	return entries, buttons
}

// saveAs drives the open save dialog: the name typed, Save tapped, and Yes to "Overwrite?"
// when it asks; it returns once the export has said how it went (the status changed). The
// confirmation and the callback may come after Save returns (on a loaded machine they did:
// the status was read before the export ran), so both are waited for, not looked for once.
func saveAs(t *testing.T, h *harness, name string) {
	t.Helper()
	entries, buttons := dialogWidgets(h.win)
	if len(entries) == 0 || buttons["Save"] == nil {
		t.Fatalf("no save dialog: %d entries, buttons %v", len(entries), buttons)
	}
	entries[len(entries)-1].SetText(name) // the file name (the last entry of the dialog)
	before := h.in.panels.toolbar.status.Text
	test.Tap(buttons["Save"])
	h.pump("the export", func() bool {
		if _, b := dialogWidgets(h.win); b["Yes"] != nil {
			test.Tap(b["Yes"])
		}
		return h.in.panels.toolbar.status.Text != before
	})
}

func TestSaveDialogNeverTouchesTheChosenFile(t *testing.T) {
	dir := t.TempDir()
	photo := filepath.Join(dir, "photo.png")
	raw, err := os.ReadFile(demoPhoto)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(photo, raw, 0o644)
	h := newHarness(t)
	h.in.memory.prefs.SetString(prefExportFolder, dir) // the dialog opens in the photo's folder
	h.in.OpenFiles(demoDir, photo)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })

	h.in.saveDialog(h.in.viewExportName(""), h.in.ExportFigure)
	saveAs(t, h, "photo.png")
	if now, err := os.ReadFile(photo); err != nil || !bytes.Equal(now, raw) {
		t.Fatalf("the open image typed into the save dialog: %d bytes now (was %d), %v", len(now), len(raw), err)
	}
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, "would overwrite an input") {
		t.Errorf("status %q, want the refusal", st)
	}
	if v := h.in.panels.toolbar.progress.Value; v != 1 {
		t.Errorf("after a refused export the finished run's progress reads %v", v)
	}

	h.in.saveDialog(h.in.viewExportName(""), h.in.ExportFigure)
	saveAs(t, h, "figure.png")
	if b, err := os.ReadFile(filepath.Join(dir, "figure.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("a new name: %d bytes, %v, want the figure", len(b), err)
	}
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, "exported") {
		t.Errorf("status %q", st)
	}
}

// A checkpoint opened from a Hugging Face cache snapshot (its files are symlinks into
// blobs/): no export replaces a link or the blob it names, or adds a file to the snapshot.
func TestExportNeverIntoASnapshot(t *testing.T) {
	root := t.TempDir()
	blobs, snap := filepath.Join(root, "blobs"), filepath.Join(root, "snapshots", "0123")
	os.MkdirAll(blobs, 0o755)
	os.MkdirAll(snap, 0o755)
	ents, err := os.ReadDir(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ents {
		b, err := os.ReadFile(filepath.Join(demoDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		blob := filepath.Join(blobs, strings.Repeat(string(rune('a'+i)), 8))
		os.WriteFile(blob, b, 0o644)
		os.Symlink(blob, filepath.Join(snap, e.Name()))
	}
	h := newHarness(t)
	h.in.OpenFiles(snap, demoPhoto)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	model := filepath.Join(snap, "model.safetensors")
	target, _ := os.Readlink(model)
	before, _ := os.ReadFile(target)
	for _, path := range []string{model, target, filepath.Join(snap, "figure.png")} {
		if err := h.in.ExportFigure(path); err == nil {
			t.Errorf("an export to %s was written", path)
		}
	}
	if st, err := os.Lstat(model); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the snapshot's link was replaced: %v", err)
	}
	if after, _ := os.ReadFile(target); !bytes.Equal(after, before) {
		t.Error("the blob changed")
	}
	if now, _ := os.ReadDir(snap); len(now) != len(ents) {
		t.Errorf("snapshot entries now %v, were %d", now, len(ents))
	}
}
