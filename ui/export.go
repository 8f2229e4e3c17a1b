package ui

// export.go: the view as PNG, the run's timings as JSON and CSV, and the run's tensors in
// the CLI's dump format. Invariant: an export writes what the window shows (the same
// snapshot); the mutation that would silently break it: exporting a compare run's timings.

import (
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/turbospark/inspector/engine"
)

// ExportPNG writes the image view (photo, overlay, selection) as PNG.
func (in *Inspector) ExportPNG(path string) error {
	img := in.image.view.Snapshot()
	if img == nil {
		return errors.New("nothing to export yet")
	}
	return writeFile(path, func(w io.Writer) error { return png.Encode(w, img) })
}

// ExportTimingsJSON writes the finished run's report.
func (in *Inspector) ExportTimingsJSON(path string) error {
	rep, err := in.finishedReport()
	if err != nil {
		return err
	}
	return writeFile(path, func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(rep)
	})
}

// ExportTimingsCSV writes one row per block.
func (in *Inspector) ExportTimingsCSV(path string) error {
	rep, err := in.finishedReport()
	if err != nil {
		return err
	}
	return writeFile(path, rep.WriteCSV)
}

// ExportDump writes the run's tensors with the selected query's attention rows and the taps
// kept beyond q, k and out (q and k are what the attention rows are made of).
func (in *Inspector) ExportDump(path string) error {
	if _, err := in.finishedReport(); err != nil {
		return err
	}
	if in.Snap.Dump == nil {
		return errors.New("this run kept no block outputs (over the probe memory budget): nothing to dump")
	}
	return in.Snap.Dump.Write(path, in.Sel.Query, moreTaps(in.Snap.Settings))
}

func (in *Inspector) finishedReport() (*engine.Report, error) {
	if !in.Snap.Loaded() || in.Snap.Report == nil {
		return nil, errors.New("the run has not finished: run all blocks first")
	}
	return in.Snap.Report, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// saveDialog asks for a path and runs export on it, reporting the outcome in the status.
func (in *Inspector) saveDialog(name string, export func(string) error) {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		path := w.URI().Path()
		w.Close()
		if err := export(path); err != nil {
			in.toolbar.setStatus(Status{Text: "export: " + err.Error(), Err: err})
			return
		}
		in.toolbar.setStatus(Status{Text: "exported " + path, Progress: 1})
	}, in.Win)
	d.SetFileName(name)
	d.Show()
}
