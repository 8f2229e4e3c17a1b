package ui

// toolbar.go: open, recent, run controls, export, progress and status. Invariant: Cancel
// is enabled exactly while a job runs (Status.Busy); the mutation that would silently break
// it: enabling it from the button handlers instead of from the controller's status.

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

type toolbar struct {
	in                          *Inspector
	openCk, openImg, recent     *widget.Button
	runAll, step, play, restart *widget.Button
	cancel, export              *widget.Button
	progress                    *widget.ProgressBar
	status                      *widget.Label
	last                        Status
	pendingCheckpoint           string // chosen before any image
}

func newToolbar(in *Inspector) *toolbar {
	t := &toolbar{in: in}
	t.openCk = widget.NewButtonWithIcon("Checkpoint…", theme.FolderOpenIcon(), t.chooseCheckpoint)
	t.openImg = widget.NewButtonWithIcon("Image…", theme.FileImageIcon(), t.chooseImage)
	t.recent = widget.NewButtonWithIcon("Recent", theme.HistoryIcon(), t.showRecent)
	t.runAll = widget.NewButtonWithIcon("Run all", theme.MediaFastForwardIcon(), in.Ctl.RunAll)
	t.step = widget.NewButtonWithIcon("Step", theme.MediaSkipNextIcon(), in.Ctl.Step)
	t.play = widget.NewButtonWithIcon("Play", theme.MediaPlayIcon(), t.togglePlay)
	t.restart = widget.NewButtonWithIcon("Restart", theme.MediaReplayIcon(), in.Ctl.Restart)
	t.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), in.Ctl.Cancel)
	t.cancel.Disable()
	t.export = widget.NewButtonWithIcon("Export", theme.DocumentSaveIcon(), t.showExport)
	t.progress = widget.NewProgressBar()
	t.status = widget.NewLabel("open a checkpoint folder and an image, or drop them on the window")
	t.status.Truncation = fyne.TextTruncateEllipsis
	return t
}

func (t *toolbar) content() fyne.CanvasObject {
	buttons := container.NewHBox(t.openCk, t.openImg, t.recent, widget.NewSeparator(),
		t.runAll, t.step, t.play, t.restart, t.cancel, widget.NewSeparator(), t.export)
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

func (t *toolbar) chooseCheckpoint() {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil || u == nil {
			return
		}
		image := ""
		if s := t.in.Snap; s != nil {
			image = s.ImagePath
		}
		if image == "" {
			t.setStatus(Status{Text: "checkpoint chosen: now choose an image"})
			t.pendingCheckpoint = u.Path()
			return
		}
		t.in.OpenFiles(u.Path(), image)
	}, t.in.Win)
	d.Show()
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
			dir = s.CheckpointDir
		}
		if dir == "" {
			t.setStatus(Status{Text: "image chosen: now choose a checkpoint folder"})
			return
		}
		t.pendingCheckpoint = ""
		t.in.OpenFiles(dir, path)
	}, t.in.Win)
	d.Show()
}

func (t *toolbar) showRecent() {
	var items []*fyne.MenuItem
	for _, dir := range recentList(t.in.prefs, recentCheckpoints) {
		dir := dir
		items = append(items, fyne.NewMenuItem("checkpoint: "+dir, func() { t.openRecent(dir, "") }))
	}
	for _, img := range recentList(t.in.prefs, recentImages) {
		img := img
		items = append(items, fyne.NewMenuItem("image: "+img, func() { t.openRecent("", img) }))
	}
	if len(items) == 0 {
		items = append(items, fyne.NewMenuItem("(nothing opened yet)", nil))
	}
	widget.ShowPopUpMenuAtRelativePosition(fyne.NewMenu("", items...), t.in.Win.Canvas(),
		fyne.NewPos(0, t.recent.Size().Height), t.recent)
}

// openRecent reopens with one side replaced.
func (t *toolbar) openRecent(dir, image string) {
	if s := t.in.Snap; s != nil {
		if dir == "" {
			dir = s.CheckpointDir
		}
		if image == "" {
			image = s.ImagePath
		}
	}
	if dir == "" || image == "" {
		t.setStatus(Status{Text: fmt.Sprintf("need both a checkpoint and an image (have %q, %q)", dir, image)})
		return
	}
	t.in.OpenFiles(dir, image)
}

func (t *toolbar) showExport() {
	menu := fyne.NewMenu("",
		fyne.NewMenuItem("View as PNG…", func() { t.in.saveDialog("inspector-view.png", t.in.ExportPNG) }),
		fyne.NewMenuItem("Timings as JSON…", func() { t.in.saveDialog("timings.json", t.in.ExportTimingsJSON) }),
		fyne.NewMenuItem("Timings as CSV…", func() { t.in.saveDialog("timings.csv", t.in.ExportTimingsCSV) }),
		fyne.NewMenuItem("Run as safetensors dump…", func() { t.in.saveDialog("dump.safetensors", t.in.ExportDump) }),
	)
	widget.ShowPopUpMenuAtRelativePosition(menu, t.in.Win.Canvas(), fyne.NewPos(0, t.export.Size().Height), t.export)
}
