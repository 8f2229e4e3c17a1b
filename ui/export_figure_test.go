package ui

// export_figure_test.go: the figure exports and the save dialog on the demo, headless — the
// view's figure is the view as drawn (same scale as the legend) at 1x and 2x, a contact sheet
// of heads or blocks puts every panel on one shared scale, the save dialog offers a telling
// name in the folder the last export went to, and nothing is written over an input.
//
// Invariant: an export shows what the window shows, on the scale the legend names, and
// never replaces an input. Mutations caught: a figure panel recomposed with the raw range, a
// sheet whose tiles each have their own scale, the 2x export at 1x, the last folder not
// remembered, an export written over the open image.

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"

	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/testfixture"
	"github.com/turbospark/inspector/ui/widgets"
)

func sameRGBA(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

func TestExportViewIsTheView(t *testing.T) {
	h := hmDemo(t)
	p, in := h.in.panels.image, h.in
	p.clip.SetSelected("99th pct") // a scale other than the raw range
	in.Sel.Grid = true
	p.view.SetShowGrid(true)
	f, err := in.viewFigure(1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Scale != p.scale || f.Colormap != p.cm || f.ScaleCaption != p.unit {
		t.Errorf("figure scale %+v %v %q, legend's %+v %v %q", f.Scale, f.Colormap, f.ScaleCaption, p.scale, p.cm, p.unit)
	}
	if !sameRGBA(f.Panels[0], p.view.Snapshot()) {
		t.Error("the exported panel differs from the view's snapshot (overlay, grid, marks, selection)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "v.png")
	if err := in.ExportView(path, 2); err != nil {
		t.Fatal(err)
	}
	f2, _ := in.viewFigure(2)
	W, H := in.Snap.Page.Resized.W, in.Snap.Page.Resized.H
	if b := f2.Panels[0].Bounds(); b.Dx() != 2*W || b.Dy() != 2*H {
		t.Errorf("2x panel %v, want %dx%d", b, 2*W, 2*H)
	}
	raw, _ := os.ReadFile(path)
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	want, lay := widgets.RenderFigure(f2)
	if !sameRGBA(img, want) || lay.Bar.Empty() {
		t.Errorf("the PNG is not the 2x figure (%v vs %v), bar %v", img.Bounds(), want.Bounds(), lay.Bar)
	}
	if len(f2.Caption) < 3 || !regexp.MustCompile(`block \d+, mean of heads`).MatchString(f2.Caption[1]) ||
		!regexp.MustCompile(`query patch \d+ \(row \d+, col \d+\)`).MatchString(f2.Caption[2]) ||
		!regexp.MustCompile(`checkpoint demo`).MatchString(f2.Caption[0]) {
		t.Errorf("caption %q", f2.Caption)
	}
}

func TestContactSheetsShareOneScale(t *testing.T) {
	h := hmDemo(t)
	in := h.in
	s, q := in.Snap, in.Sel.Query
	f, err := in.headSheet()
	if err != nil {
		t.Fatal(err)
	}
	e, _ := in.maps.rows.Wait(s.Probes, in.Sel.Block, q)
	if len(f.Panels) != s.Config.Heads+1 || f.Labels[0] != "h0" || f.Labels[len(f.Labels)-1] != "mean" {
		t.Fatalf("head sheet: %d panels, labels %q", len(f.Panels), f.Labels)
	}
	var hi float32
	for _, r := range append(e.Rows, e.Mean) {
		hi = max(hi, hmMaxExcept(r, q))
	}
	if f.Scale.Hi != hi || f.Scale.Lo != 0 {
		t.Errorf("head sheet scale [%v, %v], want [0, %v] over every panel", f.Scale.Lo, f.Scale.Hi, hi)
	}
	// every tile painted with that one scale (the weakest head would be bright on its own)
	tile := f.Panels[0].Bounds()
	k := float64(tile.Dx()) / float64(s.Page.Resized.W)
	photo := pagePhoto(s, tile.Dx(), tile.Dy())
	for hd := range s.Config.Heads {
		want := widgets.ComposeHeatmap(photo, patchGrid(s), in.maps.opts.withoutQuery(e.Rows[hd], true, q), f.Colormap, f.Scale, in.Sel.Opacity)
		widgets.DecorateHeatmap(want, patchGrid(s), false, nil, q)
		if !sameRGBA(f.Panels[hd], want) {
			t.Errorf("head %d's tile is not on the shared scale (tile scale %.2f)", hd, k)
		}
	}
	bs, err := in.blockSheet()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs.Panels) != s.Next || bs.Labels[s.Next-1] != "block 3" {
		t.Errorf("block sheet: %d panels, labels %q", len(bs.Panels), bs.Labels)
	}
	var bhi float32
	for b := range s.Next {
		r, _ := in.maps.rows.WaitRow(s.Probes, b, in.Sel.Head, q)
		bhi = max(bhi, hmMaxExcept(r, q))
	}
	if bs.Scale.Hi != bhi {
		t.Errorf("block sheet scale hi %v, want %v over every block", bs.Scale.Hi, bhi)
	}
	dir := t.TempDir()
	for name, export := range map[string]func(string) error{"heads.png": in.ExportHeadSheet, "blocks.png": in.ExportBlockSheet} {
		if err := export(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() < 5000 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSaveDialogRemembersTheFolder(t *testing.T) {
	h := hmDemo(t)
	in := h.in
	type offer struct{ dir, name string }
	var got []offer
	in.chrome.dialogs.showSave = func(_ *dialog.FileDialog, dir, name string) { got = append(got, offer{dir, name}) }
	name := in.viewExportName("-2x")
	if want := "demo-attention-b3-mean-q"; len(name) < len(want) || name[:len(want)] != want || filepath.Ext(name) != ".png" {
		t.Errorf("default name %q", name)
	}
	in.saveDialog(name, in.ExportFigure)
	first := t.TempDir()
	in.saveChosen(filepath.Join(first, name), in.ExportFigure)
	if _, err := os.Stat(filepath.Join(first, name)); err != nil {
		t.Fatal(err)
	}
	in.saveDialog("heads.png", in.ExportHeadSheet)
	second := t.TempDir()
	in.saveChosen(filepath.Join(second, "heads.png"), in.ExportHeadSheet)
	in.saveDialog("x.png", in.ExportFigure)
	if len(got) != 3 || got[0].name != name || got[1].dir != first || got[2].dir != second {
		t.Errorf("offers %+v: want the last export's folder each time", got)
	}
	// a failed export leaves the chosen file as it was, and creates none
	kept := filepath.Join(t.TempDir(), "t.json")
	os.WriteFile(kept, []byte("mine"), 0o644)
	in.saveChosen(kept, func(string) error { return errors.New("no") })
	if b, err := os.ReadFile(kept); err != nil || string(b) != "mine" {
		t.Errorf("a failed export changed the chosen file: %q, %v", b, err)
	}
	fresh := filepath.Join(t.TempDir(), "new.json")
	in.saveChosen(fresh, func(string) error { return errors.New("no") })
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a failed export left a file behind")
	}
}

func TestExportNeverOverAnInput(t *testing.T) {
	photo := filepath.Join(t.TempDir(), "photo.png")
	raw, err := os.ReadFile(demoPhoto)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(photo, raw, 0o644)
	h := newHarness(t)
	h.in.OpenFiles(demoDir, photo)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	for name, export := range map[string]func(string) error{
		"view": h.in.ExportFigure, "heads": h.in.ExportHeadSheet, "csv": h.in.ExportTimingsCSV, "dump": h.in.ExportDump,
	} {
		if err := export(photo); !errors.Is(err, fsx.ErrSameFile) {
			t.Errorf("%s over the open image: %v, want ErrSameFile", name, err)
		}
	}
	if now, _ := os.ReadFile(photo); !bytes.Equal(now, raw) {
		t.Fatal("the open image was changed")
	}
	filter := outputFilter{inputs: h.in.inputs(), ext: ".png"}
	if filter.Matches(uriOf(photo)) || !filter.Matches(uriOf(filepath.Join(filepath.Dir(photo), "other.png"))) {
		t.Error("the dialog filter lists the open image, or hides other PNGs")
	}
}

func uriOf(path string) fyne.URI { return storage.NewFileURI(path) }

// A figure named .svg (.pdf) is written as SVG (PDF) with the PNG's layout; without the caption the figure
// is shorter by its lines; names for CSV exports end in .csv alone.
func TestExportSVGAndNoCaption(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	dir := t.TempDir()
	svg, pdf, full, bare := filepath.Join(dir, "v.svg"), filepath.Join(dir, "v.PDF"), filepath.Join(dir, "v.png"), filepath.Join(dir, "bare.png")
	for path, export := range map[string]func(string) error{svg: h.in.ExportFigure, pdf: h.in.ExportFigure, full: h.in.ExportFigure, bare: h.in.ExportViewNoCaption} {
		if err := export(path); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(data, []byte("<?xml")) || !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte("checkpoint demo")) {
		t.Errorf("the .svg export is not an SVG with its caption (%v): %.200s", err, data)
	}
	if data, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(data, []byte("%PDF-1.4")) {
		t.Errorf("the .PDF export is not a PDF (%v)", err)
	}
	a, b := testfixture.ReadPNG(t, full), testfixture.ReadPNG(t, bare)
	if a.Bounds().Dx() < b.Bounds().Dx() || a.Bounds().Dy()-b.Bounds().Dy() < 40 {
		t.Errorf("with the caption %v, without %v: the caption's lines were not dropped", a.Bounds(), b.Bounds())
	}
	if n := h.in.exportName("head-stats", ".csv"); !strings.HasSuffix(n, ".csv") {
		t.Errorf("a CSV export is offered as %q", n)
	}
}
