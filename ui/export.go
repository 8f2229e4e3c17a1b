package ui

// export.go: the view as people publish it — a PNG figure at the page's resolution or twice
// it, with the colour bar of the scale the overlay was painted with and a caption
// (checkpoint, image, block, head, query, scale, settings); contact sheets of every head of
// a block or of one head across the blocks, on one shared scale, labelled — and the run's
// timings as JSON and CSV and its tensors in the CLI's dump format. Every file goes through
// a save dialog that offers a name saying what it is and starts in the folder the last export
// went to, and is written by fsx.WriteAtomic after fsx.CheckOutputs refused the inputs.
//
// Invariant: an export writes what the window shows (the same snapshot, the same Scale as
// the legend), and never over an input. The mutation that would silently break it: exporting
// a compare run's timings, or a figure whose bar was recomputed from the raw values while
// the panels used the clipped or shared scale.

import (
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
	xdraw "golang.org/x/image/draw"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/jsonx"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

// sheetTile bounds a contact sheet's panel: the page fit in sheetTile x sheetTile pixels.
const sheetTile = 256

// ExportFigure writes the view as a figure at the page's resolution: PNG, or SVG or PDF when the
// path ends in .svg or .pdf (writeFigureFile), as every figure export does.
func (in *Inspector) ExportFigure(path string) error { return in.ExportView(path, 1) }

// ExportView writes the view as a figure at zoom (1 or 2) times the page's resolution: the
// photo with the overlay, grid, marks and selection as drawn, the colour bar of the scale
// used, and the caption.
func (in *Inspector) ExportView(path string, zoom int) error {
	f, err := in.viewFigure(zoom)
	if err != nil {
		return err
	}
	return in.writeFigureFile(path, f)
}

// ExportViewNoCaption is ExportView at the page's resolution without the caption lines (the
// map and its colour bar alone, for a figure whose caption is written elsewhere).
func (in *Inspector) ExportViewNoCaption(path string) error {
	f, err := in.viewFigure(1)
	if err != nil {
		return err
	}
	f.Caption = nil
	return in.writeFigureFile(path, f)
}

// writeFigureFile writes f as SVG or PDF when path ends in .svg or .pdf (any case), else as
// PNG.
func (in *Inspector) writeFigureFile(path string, f widgets.Figure) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return in.writeOutput(path, func(w io.Writer) error { return widgets.RenderFigureSVG(w, f) })
	case ".pdf":
		return in.writeOutput(path, func(w io.Writer) error { return widgets.RenderFigurePDF(w, f) })
	}
	img, _ := widgets.RenderFigure(f)
	return in.writeOutput(path, func(w io.Writer) error { return png.Encode(w, img) })
}

// viewFigure is the figure of the view: the image panel's, as it is painted.
func (in *Inspector) viewFigure(zoom int) (widgets.Figure, error) {
	return in.panels.image.figure(zoom)
}

// pagePhoto is the resized page scaled to w x h.
func pagePhoto(s *Snapshot, w, h int) image.Image {
	src := rgbImage(s.Page.Resized)
	if w == s.Page.Resized.W && h == s.Page.Resized.H {
		return src
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Rect, src, src.Bounds(), xdraw.Src, nil)
	return dst
}

// figureCaption is what a figure says under its bar: the files, what is shown (desc, the
// panel's caption), the query and the display (cm: the colormap the view is painted with)
// and run settings.
func (in *Inspector) figureCaption(desc string, cm widgets.Colormap) []string {
	s, o := in.Snap, in.maps.opts
	g := s.Layout.Grids[0]
	q := s.Layout.Pos[in.Sel.Query]
	opts := []string{fmt.Sprintf("colormap %s", cm), fmt.Sprintf("opacity %.2f", in.Sel.Opacity)}
	if in.Sel.Overlay == OverlayRollout || in.Sel.Overlay == OverlayRolloutWhole {
		opts = append(opts, fmt.Sprintf("rollout fusion %s, discard %s", o.Fusion, discardName(o.Discard)))
	}
	return []string{
		fmt.Sprintf("%s · checkpoint %s · image %s (%d x %d px, %d x %d patches)", Title, baseName(s.CheckpointDir),
			baseName(s.ImagePath), s.Page.Resized.W, s.Page.Resized.H, g.H, g.W),
		desc,
		fmt.Sprintf("query patch %d (row %d, col %d) · %s", in.Sel.Query, q.Row, q.Col, strings.Join(opts, " · ")),
		"run: " + s.Settings.Describe(),
	}
}

// headSheet is every head of the selected block (and their mean) for the query, on one
// scale shared by the tiles.
func (in *Inspector) headSheet() (widgets.Figure, error) {
	s := in.Snap
	if !s.Loaded() || in.Sel.Block >= s.Next {
		return widgets.Figure{}, errors.New("nothing to export yet: the selected block has not run")
	}
	e, err := in.maps.rows.Wait(s.Probes, in.Sel.Block, in.Sel.Query)
	if err != nil {
		return widgets.Figure{}, err
	}
	maps := append(append([][]float32{}, e.Rows...), e.Mean)
	var labels []string
	for h := range e.Rows {
		labels = append(labels, fmt.Sprintf("h%d", h))
	}
	labels = append(labels, "mean")
	desc := fmt.Sprintf("block %d: attention of the query patch, every head and their mean, on one scale", in.Sel.Block)
	return in.sheet(maps, labels, true, desc), nil
}

// blockSheet is the overlay's map (the selected head's attention, or the per-patch map
// shown) for every block run, on one scale shared by the tiles.
func (in *Inspector) blockSheet() (widgets.Figure, error) {
	s := in.Snap
	if !s.Loaded() || s.Next == 0 {
		return widgets.Figure{}, errors.New("nothing to export yet: no block has run")
	}
	var maps [][]float32
	var labels []string
	for b := range s.Next {
		m, err := in.mapOfBlock(b)
		if err != nil {
			return widgets.Figure{}, err
		}
		maps, labels = append(maps, m), append(labels, fmt.Sprintf("block %d", b))
	}
	what := in.Sel.Overlay
	att := attentionLike(what) || what == OverlayNone
	desc := fmt.Sprintf("%s per patch in every block, on one scale", what)
	if att {
		desc = fmt.Sprintf("%s: attention of the query patch in every block, on one scale", headName(in.Sel.Head))
	} else if what == OverlayChannel {
		desc = fmt.Sprintf("%s, channel %d, in every block, on one scale", tapCaption(in.Sel.Tap), in.Sel.Channel)
	}
	return in.sheet(maps, labels, att, desc), nil
}

// sheet lays maps out as labelled tiles on one scale shared by all of them.
func (in *Inspector) sheet(maps [][]float32, labels []string, attention bool, desc string) widgets.Figure {
	s, o := in.Snap, in.maps.opts
	cm, sc := o.heatmapScale(maps, in.Sel.Colors, attention, in.Sel.Query)
	W, H := s.Page.Resized.W, s.Page.Resized.H
	k := math.Min(1, float64(sheetTile)/float64(max(W, H)))
	photo := pagePhoto(s, max(1, int(float64(W)*k+0.5)), max(1, int(float64(H)*k+0.5)))
	grid := patchGrid(s)
	var panels []image.Image
	for _, m := range maps {
		var vals []float32
		if !sc.Constant {
			vals = o.withoutQuery(m, attention, in.Sel.Query)
		}
		tile := widgets.ComposeHeatmap(photo, grid, vals, cm, sc, in.Sel.Opacity)
		widgets.DecorateHeatmap(tile, grid, false, nil, in.Sel.Query)
		panels = append(panels, tile)
	}
	unit := legendCaption(in.Sel.Overlay)
	if attention {
		unit = legendCaption(OverlayAttention)
	}
	if d := describeScale(sc, fmt.Sprintf("shared by the %d panels", len(maps))); d != "" {
		unit += " · " + d
	}
	cols := int(math.Ceil(math.Sqrt(float64(len(maps)))))
	return widgets.Figure{Panels: panels, Labels: labels, Cols: cols, Colormap: cm, Scale: sc, ScaleCaption: unit,
		Caption: in.figureCaption(desc, in.panels.image.cm), Zoom: 1} // the caption names the view's colormap
}

// ExportHeadSheet writes every head of the selected block (and their mean) as a PNG contact
// sheet on one scale.
func (in *Inspector) ExportHeadSheet(path string) error { return in.writeFigure(path, in.headSheet) }

// ExportBlockSheet writes the selected head's map (or the per-patch map shown) of every block
// run as a PNG contact sheet on one scale.
func (in *Inspector) ExportBlockSheet(path string) error { return in.writeFigure(path, in.blockSheet) }

func (in *Inspector) writeFigure(path string, build func() (widgets.Figure, error)) error {
	f, err := build()
	if err != nil {
		return err
	}
	return in.writeFigureFile(path, f)
}

// ExportTimingsJSON writes the finished run's report.
func (in *Inspector) ExportTimingsJSON(path string) error {
	rep, err := in.finishedReport()
	if err != nil {
		return err
	}
	return in.writeOutput(path, func(w io.Writer) error {
		return jsonx.Encode(w, rep, "  ")
	})
}

// ExportCompareJSON writes the last Compare: both sides' settings, every pass's per-block
// times, the medians and ranges, B/A with its interval, the verdict and the output
// differences (as `inspector compare --json` writes them).
func (in *Inspector) ExportCompareJSON(path string) error {
	r := in.runs.compare
	if r == nil {
		return errors.New("no Compare has finished yet: run one in the Compare tab")
	}
	return in.writeOutput(path, func(w io.Writer) error {
		return jsonx.Encode(w, map[string]any{"checkpoint": in.Snap.CheckpointDir, "image": in.Snap.ImagePath, "comparison": r.Comparison}, "  ")
	})
}

// ExportTimingsCSV writes one row per block.
func (in *Inspector) ExportTimingsCSV(path string) error {
	rep, err := in.finishedReport()
	if err != nil {
		return err
	}
	return in.writeOutput(path, rep.WriteCSV)
}

// ExportHeadStatsCSV writes the block x head matrices of the Attention tab, one row per block
// and head: where the block attends (whole image or windows), the mean attention distance
// (patches) and entropy (nats) over the sampled queries, and uniform attention's values over
// the same queries (the baseline the tab's note gives). It needs every block's statistics.
func (in *Inspector) ExportHeadStatsCSV(path string) error {
	s := in.Snap
	if !s.Loaded() {
		return fmt.Errorf("no run to export")
	}
	hs := in.maps.rows.HeadStats(s.Probes)
	dist, entropy := hs.Dist, hs.Entropy
	if len(dist) < s.Config.Depth {
		return fmt.Errorf("the head statistics cover %d of %d blocks so far: let the run finish and the Attention tab compute them, then export", len(dist), s.Config.Depth)
	}
	return in.writeOutput(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"block", "head", "attends", "mean_distance_patches", "entropy_nats", "uniform_distance_patches", "uniform_entropy_nats", "queries"})
		for b := range s.Config.Depth {
			ud, ue := s.Probes.UniformBaseline(b, control.HeadStatQueries)
			attends := "image"
			if s.Layout.Windowed(b) {
				attends = "windows"
			}
			for h := range dist[b] {
				cw.Write([]string{strconv.Itoa(b), strconv.Itoa(h), attends, fmtG(dist[b][h]), fmtG(entropy[b][h]), fmtG(ud), fmtG(ue),
					strconv.Itoa(min(control.HeadStatQueries, s.Layout.Rows()))})
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// ExportHeadImportanceCSV writes the last head sweep: one row per head, the merger's and each
// block's relative change when that head alone was ablated.
func (in *Inspector) ExportHeadImportanceCSV(path string) error {
	r := in.runs.sweep
	if r == nil {
		return fmt.Errorf("no head sweep yet: press Sweep heads in the What if tab")
	}
	return in.writeOutput(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		head := []string{"block", "head", "ablate_mode", "merger_rel_change"}
		for b := range r.Depth {
			head = append(head, fmt.Sprintf("block%d_rel_change", b))
		}
		cw.Write(head)
		for _, row := range r.Rows {
			rec := []string{strconv.Itoa(row.Block), row.Head, r.Mode, fmtG(row.Merger)}
			for _, v := range row.Blocks {
				rec = append(rec, fmtG(v))
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	})
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }

// mapPixelsPerPatch is the map-only export's block per patch.
const mapPixelsPerPatch = 16

// ExportMapPNG writes the view's map alone: every patch a block of exactly the colour the
// colorbar gives its value (no photo under it, no opacity), for figures whose colours must
// read off the colorbar.
func (in *Inspector) ExportMapPNG(path string) error {
	m := in.panels.image.mapImage(mapPixelsPerPatch)
	if m == nil {
		return fmt.Errorf("no map to export: pick an overlay that colours the patches")
	}
	return in.writeOutput(path, func(w io.Writer) error { return png.Encode(w, m) })
}

// ExportTrace writes the finished run's timeline as Chrome trace-event JSON (Perfetto,
// chrome://tracing): one track per half, the weight reads, the deepstack mergers.
func (in *Inspector) ExportTrace(path string) error {
	rep, err := in.finishedReport()
	if err != nil {
		return err
	}
	return in.writeOutput(path, rep.WriteTrace)
}

// ExportDump writes the run's tensors with the selected query's attention rows and every tap
// the run kept: out, q and k (what the attention rows are made of, post-rope), and any
// other asked for. The safetensors writer is atomic itself (a temporary file renamed into
// place).
func (in *Inspector) ExportDump(path string) error {
	if _, err := in.finishedReport(); err != nil {
		return err
	}
	if in.Snap.Dump == nil {
		return errors.New("this run kept no block outputs (over the probe memory budget): nothing to dump")
	}
	if err := fsx.CheckOutputs(in.inputs(), []string{path}); err != nil {
		return err
	}
	return in.Snap.Dump.Write(path, in.Sel.Query, in.Snap.Settings.Keep.Set())
}

func (in *Inspector) finishedReport() (*engine.Report, error) {
	if !in.Snap.Loaded() || in.Snap.Report == nil {
		return nil, errors.New("the run has not finished: run all blocks first")
	}
	return in.Snap.Report, nil
}

// inputs are what the window reads: the image and the checkpoint folder (everything in
// it, by any name: fsx.CheckOutputs protects a folder whole).
func (in *Inspector) inputs() []string {
	s := in.Snap
	if s == nil {
		return nil
	}
	return engine.InputFiles(s.CheckpointDir, s.ImagePath, s.Settings) // the patch's source image too
}

// writeOutput writes path through write, atomically, refusing an input.
func (in *Inspector) writeOutput(path string, write func(io.Writer) error) error {
	if err := fsx.CheckOutputs(in.inputs(), []string{path}); err != nil {
		return err
	}
	return fsx.WriteAtomic(path, write)
}

// exportName is a file name saying what an export of the view holds:
// <checkpoint>-<what>-b<block>-<head>-q<query><suffix>, then ".png" unless suffix ends in an
// extension of its own (".csv", "-2x.svg").
func (in *Inspector) exportName(what, suffix string) string {
	ext := ".png"
	if filepath.Ext(suffix) != "" {
		ext = ""
	}
	s := in.Snap
	if !s.Loaded() {
		return "inspector-" + what + suffix + ext
	}
	head := "mean"
	if in.Sel.Head >= 0 {
		head = fmt.Sprintf("h%d", in.Sel.Head)
	}
	name := fmt.Sprintf("%s-%s-b%d-%s-q%d%s", baseName(s.CheckpointDir), what, in.Sel.Block, head, in.Sel.Query, suffix)
	return fileSafe.ReplaceAllString(name, "_") + ext
}

var fileSafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// viewExportName is the name offered for the view's figure (suffix "-2x": at twice the size).
func (in *Inspector) viewExportName(suffix string) string {
	return in.exportName(fileSafe.ReplaceAllString(in.Sel.Overlay, "_"), suffix)
}

// showExportMenu offers the figure exports of the image panel.
func (p *imagePanel) showExportMenu() {
	in := p.in
	menu := fyne.NewMenu("",
		fyne.NewMenuItem("View as PNG…", func() { in.saveDialog(in.viewExportName(""), in.ExportFigure) }),
		fyne.NewMenuItem("View as PNG at 2x…", func() {
			in.saveDialog(in.viewExportName("-2x"), func(path string) error { return in.ExportView(path, 2) })
		}),
		fyne.NewMenuItem("View as SVG (text and colour bar as vectors)…", func() { in.saveDialog(in.viewExportName(".svg"), in.ExportFigure) }),
		fyne.NewMenuItem("View as PDF…", func() { in.saveDialog(in.viewExportName(".pdf"), in.ExportFigure) }),
		fyne.NewMenuItem("View without the caption (PNG, or SVG or PDF by the name)…", func() {
			in.saveDialog(in.viewExportName("-nocaption"), in.ExportViewNoCaption)
		}),
		fyne.NewMenuItem("Map only as PNG (the colorbar's colours, no photo)…", func() { in.saveDialog(in.viewExportName("-map"), in.ExportMapPNG) }),
		fyne.NewMenuItem("Every head of this block (contact sheet)…", func() { in.saveDialog(in.exportName("heads", ""), in.ExportHeadSheet) }),
		fyne.NewMenuItem("This head in every block (contact sheet)…", func() { in.saveDialog(in.viewExportName("-blocks"), in.ExportBlockSheet) }),
	)
	widget.ShowPopUpMenuAtRelativePosition(menu, in.Win.Canvas(), fyne.NewPos(0, p.exportBtn.Size().Height), p.exportBtn)
}

// saveDialog asks for a path — offering name in the folder the last export went to — and
// runs export on it, reporting the outcome in the status. The dialog only names the file:
// it opens nothing (savepath.go), the export checks the path and writes it atomically.
func (in *Inspector) saveDialog(name string, export func(string) error) {
	if err := guardSaveDialogs(); err != nil {
		in.say("export: no save dialog: "+err.Error(), err)
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		path := w.URI().Path()
		w.Close()
		in.saveChosen(path, export)
	}, in.Win)
	d.SetFileName(name)
	dir := in.exportFolder()
	if dir != "" {
		if l, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
			d.SetLocation(l)
		}
	}
	d.SetFilter(outputFilter{inputs: in.inputs(), ext: filepath.Ext(name)})
	if show := in.chrome.dialogs.showSave; show != nil {
		show(d, dir, name)
		return
	}
	d.Show()
}

// saveChosen runs export on the path the user chose and remembers its folder.
func (in *Inspector) saveChosen(path string, export func(string) error) {
	if err := export(path); err != nil {
		in.say("export: "+err.Error(), err)
		return
	}
	if in.memory.prefs != nil {
		in.memory.prefs.SetString(prefExportFolder, filepath.Dir(path))
	}
	in.say("exported "+path, nil)
}

// exportFolder is the folder the last export went to, if it still is one.
func (in *Inspector) exportFolder() string {
	if in.memory.prefs == nil {
		return ""
	}
	if d := in.memory.prefs.String(prefExportFolder); isDir(d) {
		return d
	}
	return ""
}

// outputFilter lists the files of the export's kind and never the open image, so a click in
// the dialog does not offer it (a name typed is checked by the export).
type outputFilter struct {
	inputs []string
	ext    string
}

func (f outputFilter) Matches(u fyne.URI) bool {
	for _, in := range f.inputs {
		if abs, err := filepath.Abs(in); err == nil && abs == u.Path() {
			return false
		}
	}
	return f.ext == "" || strings.EqualFold(u.Extension(), f.ext)
}
