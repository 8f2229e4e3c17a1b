package ui

// toolbar.go: open, recent, run controls, export, progress and status; each button has a
// tooltip (tooltip.go), and the file dialogs filter images and start in the folder the last
// file of their kind came from (prefs.go). Invariant: Cancel is enabled exactly while a job
// runs (Status.Busy); the mutation that would silently break it: enabling it from the
// button handlers instead of from the controller's status.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
)

// imageExts are the image files the engine decodes (engine/imageproc), for the open dialog.
var imageExts = []string{".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif"}

// buttonTips say what each toolbar button does, and its key.
var buttonTips = map[string]string{
	"Checkpoint…": "Open a checkpoint: type or paste a folder (config.json and model.safetensors in Hugging Face layout) or a " +
		"repo id such as Qwen/Qwen3-VL-2B-Instruct in the local cache, or Browse… for a folder (Ctrl+Shift+O).",
	"Image…":  "Open an image: PNG, JPEG, WebP, BMP, TIFF or GIF (Ctrl+O)",
	"Recent":  "Reopen a checkpoint or an image used before",
	"Run all": "Run the remaining blocks and the merger",
	"Step":    "Run the next block (after the last block: the merger)",
	"Play":    "Run one block at a time with a short pause between; press again to pause (Space)",
	"Restart": "Start the same page again from block 0 without running; the query patch, head and a chosen block stay",
	"Cancel":  "Stop the running job at the next op boundary (what ran stays)",
	"Export":  "Save the view as PNG (Ctrl+E), the timings as JSON or CSV, or the run's tensors as safetensors",
}

type toolbar struct {
	in                          *Inspector
	openCk, openImg, recent     *widget.Button
	runAll, step, play, restart *widget.Button
	cancel, export              *widget.Button
	progress                    *widget.ProgressBar
	status                      *widget.Label
	last                        Status
	pendingCheckpoint           string        // chosen before any image
	checkpointEntry             *widget.Entry // the Open checkpoint dialog's path (tests)
}

func newToolbar(in *Inspector) *toolbar {
	t := &toolbar{in: in}
	t.openCk = widget.NewButtonWithIcon("Checkpoint…", theme.FolderOpenIcon(), t.chooseCheckpoint)
	t.openImg = widget.NewButtonWithIcon("Image…", theme.FileImageIcon(), t.chooseImage)
	t.recent = widget.NewButtonWithIcon("Recent", theme.HistoryIcon(), t.showRecent)
	t.runAll = widget.NewButtonWithIcon("Run all", theme.MediaFastForwardIcon(), in.Ctl.RunAll)
	t.step = widget.NewButtonWithIcon("Step", theme.MediaSkipNextIcon(), func() {
		in.Ctl.Step()
		t.syncRunButtons() // the count of Steps waiting, at once
	})
	t.play = widget.NewButtonWithIcon("Play", theme.MediaPlayIcon(), t.togglePlay)
	t.restart = widget.NewButtonWithIcon("Restart", theme.MediaReplayIcon(), in.Ctl.Restart)
	t.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), in.Ctl.Cancel)
	t.cancel.Disable()
	for _, b := range []*widget.Button{t.runAll, t.step, t.play, t.restart} {
		b.Disable() // nothing to run before a page is open
	}
	t.export = widget.NewButtonWithIcon("Export", theme.DocumentSaveIcon(), t.showExport)
	t.progress = widget.NewProgressBar()
	t.status = widget.NewLabel("open a checkpoint folder and an image, or drop them on the window")
	t.status.Truncation = fyne.TextTruncateEllipsis
	return t
}

func (t *toolbar) content() fyne.CanvasObject {
	tip := func(b *widget.Button) fyne.CanvasObject { return withTip(b, buttonTips[b.Text]) }
	buttons := container.NewHBox(tip(t.openCk), tip(t.openImg), tip(t.recent), widget.NewSeparator(),
		tip(t.runAll), tip(t.step), tip(t.play), tip(t.restart), tip(t.cancel), widget.NewSeparator(), tip(t.export))
	prog := container.NewGridWrap(fyne.NewSize(180, t.progress.MinSize().Height), t.progress)
	return container.NewVBox(buttons, container.NewBorder(nil, nil, nil, prog, t.status))
}

func (t *toolbar) setStatus(s Status) {
	t.last = s
	t.status.SetText(s.Text)
	if s.Err != nil {
		t.status.Importance = widget.DangerImportance
	} else {
		t.status.Importance = widget.MediumImportance
	}
	t.status.Refresh()
	t.progress.SetValue(s.Progress)
	if s.Busy {
		t.cancel.Enable()
	} else {
		t.cancel.Disable()
	}
	t.syncPlay()
	t.syncRunButtons()
}

// say shows a message about something other than the run (an export, a file chosen, a
// setting refused): the run's progress and its Cancel stay as they are.
func (t *toolbar) say(text string, err error) {
	t.setStatus(Status{Text: text, Err: err, Progress: t.last.Progress, Busy: t.last.Busy})
}

// syncRunButtons offers Run all, Step and Play only while something is left to run, and
// Restart once a run exists (Play stays on while playing: it is the Pause button then). Step
// stays on while Steps run, each click one more block, and says how many wait: "Step (+2)".
func (t *toolbar) syncRunButtons() {
	s := t.in.Snap
	left := s.Loaded() && !s.Finished
	idle := t.cancel.Disabled() // not while a run goes on: Cancel is its control then
	enable(t.runAll, left && idle)
	enable(t.step, left && (idle || t.in.Ctl.Stepping()))
	label := "Step"
	if n := t.in.Ctl.QueuedSteps(); n > 0 {
		label = fmt.Sprintf("Step (+%d)", n)
	}
	if t.step.Text != label {
		t.step.SetText(label)
	}
	enable(t.play, left || t.in.Ctl.Playing())
	enable(t.restart, s.Loaded())
	t.in.syncMenus()
}

func enable(b *widget.Button, on bool) {
	if on {
		b.Enable()
	} else {
		b.Disable()
	}
}

func (t *toolbar) syncPlay() {
	if t.in.Ctl.Playing() {
		t.play.SetText("Pause")
		t.play.SetIcon(theme.MediaPauseIcon())
	} else {
		t.play.SetText("Play")
		t.play.SetIcon(theme.MediaPlayIcon())
	}
}

func (t *toolbar) togglePlay() {
	if t.in.Ctl.Playing() {
		t.in.Ctl.Pause()
	} else {
		t.in.Ctl.Play()
	}
	t.syncPlay()
}

// chooseCheckpoint asks for a checkpoint: a path typed or pasted (a folder, or a Hugging Face
// repo id in the local cache), or a folder picked with Browse… (Fyne's folder dialog, which
// takes no typed path). A path that is not a checkpoint is said in the dialog, which stays.
func (t *toolbar) chooseCheckpoint() {
	entry := widget.NewEntry()
	entry.SetPlaceHolder("a checkpoint folder, or owner/name[@revision] in the Hugging Face cache")
	entry.SetText(t.in.folder(prefCheckpointFolder))
	why := widget.NewLabel("")
	why.Wrapping = fyne.TextWrapWord
	why.Importance = widget.DangerImportance
	var d dialog.Dialog
	open := func() {
		path := strings.TrimSpace(entry.Text)
		if err := checkpointPath(path); err != nil {
			why.SetText(err.Error())
			return
		}
		d.Hide()
		t.openCheckpoint(path)
	}
	entry.OnSubmitted = func(string) { open() }
	browse := widget.NewButton("Browse…", func() {
		fd := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				entry.SetText(u.Path())
				why.SetText("")
			}
		}, t.in.Win)
		startIn(fd, t.in.folder(prefCheckpointFolder))
		fd.Show()
	})
	openBtn := widget.NewButton("Open", open)
	openBtn.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", func() { d.Hide() })
	content := container.NewVBox(container.NewBorder(nil, nil, nil, browse, entry), why,
		container.NewHBox(layout.NewSpacer(), cancel, openBtn))
	d = dialog.NewCustomWithoutButtons("Open checkpoint", content, t.in.Win)
	d.Resize(fyne.NewSize(min(760, t.in.Win.Canvas().Size().Width*0.9), 200))
	t.in.showDialog(d)
	t.in.Win.Canvas().Focus(entry)
	t.checkpointEntry = entry
}

// checkpointPath says why path is not a checkpoint to open ("" is not one either).
func checkpointPath(path string) error {
	if path == "" {
		return errors.New("type a checkpoint folder or a Hugging Face repo id, or Browse…")
	}
	resolved, err := engine.ResolveCheckpoint(path)
	if err != nil {
		return err
	}
	if !isFile(filepath.Join(resolved, "config.json")) {
		return fmt.Errorf("%s is not a checkpoint folder: it has no config.json", resolved)
	}
	return nil
}

// openCheckpoint opens dir (a folder or a repo id) with the current image, or waits for one.
func (t *toolbar) openCheckpoint(dir string) {
	image := ""
	if s := t.in.Snap; s != nil {
		image = s.ImagePath
	}
	if image == "" {
		t.say("checkpoint chosen: now choose an image", nil)
		t.pendingCheckpoint = dir
		return
	}
	t.in.OpenFiles(dir, image)
}

func (t *toolbar) chooseImage() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		dir := t.pendingCheckpoint
		if s := t.in.Snap; dir == "" && s != nil {
			dir = t.in.checkpointName(s.CheckpointDir)
		}
		if dir == "" {
			t.say("image chosen: now choose a checkpoint folder", nil)
			return
		}
		t.pendingCheckpoint = ""
		t.in.OpenFiles(dir, path)
	}, t.in.Win)
	d.SetFilter(storage.NewExtensionFileFilter(imageExts))
	startIn(d, t.in.folder(prefImageFolder))
	t.in.showDialog(d)
}

// startIn makes d open in folder dir ("": Fyne's choice, the last folder any dialog used).
func startIn(d *dialog.FileDialog, dir string) {
	if dir == "" {
		return
	}
	if l, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
		d.SetLocation(l)
	}
}

func (t *toolbar) showRecent() {
	widget.ShowPopUpMenuAtRelativePosition(fyne.NewMenu("", t.recentItems()...), t.in.Win.Canvas(),
		fyne.NewPos(0, t.recent.Size().Height), t.recent)
}

// recentItems are the recent checkpoints and images, for the Recent button and menu.
func (t *toolbar) recentItems() []*fyne.MenuItem {
	var items []*fyne.MenuItem
	for _, dir := range recentList(t.in.memory.prefs, recentCheckpoints) {
		dir := dir
		items = append(items, fyne.NewMenuItem("checkpoint: "+dir, func() { t.openRecent(dir, "") }))
	}
	for _, img := range recentList(t.in.memory.prefs, recentImages) {
		img := img
		items = append(items, fyne.NewMenuItem("image: "+img, func() { t.openRecent("", img) }))
	}
	if len(items) == 0 {
		items = append(items, fyne.NewMenuItem("(nothing opened yet)", nil))
	}
	return items
}

// openRecent reopens with one side replaced.
func (t *toolbar) openRecent(dir, image string) {
	if s := t.in.Snap; s != nil {
		if dir == "" {
			dir = t.in.checkpointName(s.CheckpointDir)
		}
		if image == "" {
			image = s.ImagePath
		}
	}
	if dir == "" || image == "" {
		t.say(fmt.Sprintf("need both a checkpoint and an image (have %q, %q)", dir, image), nil)
		return
	}
	t.in.OpenFiles(dir, image)
}

func (t *toolbar) showExport() {
	menu := fyne.NewMenu("", t.in.exportItems()...)
	widget.ShowPopUpMenuAtRelativePosition(menu, t.in.Win.Canvas(), fyne.NewPos(0, t.export.Size().Height), t.export)
}
