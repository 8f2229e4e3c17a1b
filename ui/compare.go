package ui

// compare.go: the same image under two settings, per-block timings side by side with
// deltas, and the largest difference between the two runs' outputs (0 for identical
// settings: the engine is deterministic).
//
// Invariant: row i of the table is block i of both runs; the mutation that would silently
// break it: sorting one side by time.

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/widgets"
)

type comparePanel struct {
	in          *Inspector
	a, b        *settingsForm
	runBtn      *widget.Button
	formScroll  *container.Scroll      // the two forms, the button and the result line
	sides       [2]*widget.ProgressBar // each side's blocks as they finish
	bars        *widgets.Bars
	table       *widget.Label
	result      *widget.Label
	diffView    *widgets.ImageView // where the two runs differ: one block's per-patch max |A-B|
	diffKey     *widgets.Legend
	diffOf      *widget.Select // which block's output the map shows
	diffCaption string
	last        *CompareResult
}

func newComparePanel(in *Inspector) *comparePanel {
	backends := in.Ctl.Backends()
	p := &comparePanel{in: in, a: newSettingsForm(in.tileBytes, backends), b: newSettingsForm(in.tileBytes, backends)}
	a, b := backends.ComparePair()
	p.a.load(a)
	p.b.load(b)
	p.bars = widgets.NewBars(timingParts, timingColors, "ms", in.SelectBlock)
	p.table = widget.NewLabel("")
	p.table.TextStyle = fyne.TextStyle{Monospace: true}
	p.result = widget.NewLabel("Pick two settings and press Compare: both run the current image from block 0.")
	p.result.Wrapping = fyne.TextWrapWord
	p.runBtn = widget.NewButton("Compare", p.run)
	p.runBtn.Importance = widget.HighImportance
	for k := range p.sides {
		p.sides[k] = widget.NewProgressBar()
		p.sides[k].TextFormatter = func() string { return "" }
	}
	p.diffView, p.diffKey = widgets.NewImageView(), widgets.NewLegend()
	p.diffOf = widget.NewSelect(nil, func(string) { p.showDiff() })
	in.Ctl.OnCompareProgress = p.progress
	return p
}

func (p *comparePanel) content() fyne.CanvasObject {
	side := func(name string, f *settingsForm, bar *widget.ProgressBar) fyne.CanvasObject {
		return container.NewVBox(widget.NewLabelWithStyle(name, fyne.TextAlignCenter, fyne.TextStyle{Bold: true}), f.form(), bar)
	}
	forms := container.NewGridWithColumns(2, side("A", p.a, p.sides[0]), side("B", p.b, p.sides[1]))
	top := container.NewVBox(container.NewBorder(nil, nil, container.NewVBox(p.runBtn), nil, p.result), forms) // the button first: in view at any height
	diff := container.NewBorder(container.NewHBox(widget.NewLabel("where they differ: output of"), p.diffOf), p.diffKey, nil, nil, p.diffView)
	results := container.NewAppTabs(
		container.NewTabItem("timings", container.NewVSplit(p.bars, container.NewVScroll(p.table))),
		container.NewTabItem("difference map", diff))
	// A split, not a border: a border gives a scroll its minimum (one line), which hid the
	// forms and the Compare button at 1280x720; the user can drag the divider.
	p.formScroll = container.NewVScroll(top)
	split := container.NewVSplit(p.formScroll, results)
	split.Offset = 0.55
	return split
}

// progress follows the Compare in flight: the button is off while it runs.
func (p *comparePanel) progress(cp CompareProgress) {
	if !cp.Running {
		p.runBtn.Enable()
		if cp.Err != nil {
			p.result.SetText("compare: " + cp.Err.Error())
		}
		return
	}
	p.runBtn.Disable()
	if cp.Depth > 0 {
		p.sides[cp.Side].SetValue(float64(cp.Blocks) / float64(cp.Depth))
	}
}

func (p *comparePanel) run() {
	a, err := p.a.Settings()
	if err == nil {
		var b engine.Settings
		if b, err = p.b.Settings(); err == nil {
			p.result.SetText(fmt.Sprintf("running A (%s), then B (%s)…", a.Describe(), b.Describe()))
			for _, bar := range p.sides {
				bar.SetValue(0)
			}
			p.in.Ctl.Compare(a, b)
			return
		}
	}
	p.result.SetText(err.Error())
}

func (p *comparePanel) show(r *CompareResult) {
	p.bars.SetSeries(widgets.Series{Name: "A", Rows: reportRows(r.ReportA)}, widgets.Series{Name: "B", Rows: reportRows(r.ReportB)})
	p.table.SetText(compareTable(r))
	maxDiff := maxOf(r.BlockDiff, r.MergerDiff)
	verdict := "identical outputs"
	if maxDiff > 0 {
		verdict = fmt.Sprintf("outputs differ by at most %.3g", maxDiff)
	}
	ta, tb := r.ReportA.Totals.WallMS, r.ReportB.Totals.WallMS
	p.result.SetText(fmt.Sprintf("A: %s — %.1f ms.  B: %s — %.1f ms (%+.1f%%).  %s (max |A−B| over every block output and the merger).",
		r.A.Describe(), ta, r.B.Describe(), tb, 100*(tb-ta)/max(ta, 1e-9), verdict))
	p.last = r
	var blocks []string
	for i := range r.PatchDiffs {
		blocks = append(blocks, fmt.Sprintf("block %d", i))
	}
	p.diffOf.Options = blocks
	p.diffOf.SetSelectedIndex(len(blocks) - 1) // the last block: where differences have grown most
	p.showDiff()
}

// showDiff draws the selected block's per-patch max |A-B| over the page.
func (p *comparePanel) showDiff() {
	r, i := p.last, p.diffOf.SelectedIndex()
	if r == nil || i < 0 || i >= len(r.PatchDiffs) || r.Page == nil {
		return
	}
	g := r.Layout.Grids[0]
	p.diffView.SetImage(rgbImage(r.Page.Resized), widgets.PatchGrid{Rows: g.H, Cols: g.W,
		Index: func(row, col int) int { return r.Layout.Index(0, 0, row, col) }})
	vals := r.PatchDiffs[i]
	lo, hi := rangeOf(vals)
	caption := fmt.Sprintf("block %d: max over channels of |A−B| per patch (identical everywhere)", i)
	if hi > 0 {
		caption = fmt.Sprintf("block %d: max over channels of |A−B| per patch, up to %.3g", i, hi)
	}
	p.diffView.SetOverlay(vals, widgets.Magma, 0, max(hi, lo, 1e-30))
	p.diffKey.SetRange(widgets.Magma, 0, max(hi, 1e-30), caption)
	p.diffCaption = caption
}

// reportRows are a report's bar parts, in timingParts order.
func reportRows(rep *engine.Report) [][]float64 {
	rows := make([][]float64, len(rep.Blocks))
	for i, b := range rep.Blocks {
		rows[i] = barParts(b.WaitMS, b.AttentionMS, b.MLPMS, b.DeepstackMS, b.WallMS)
	}
	return rows
}

// compareTable lists block, A and B wall times, the delta and the max output difference.
func compareTable(r *CompareResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%5s %10s %10s %10s %8s %12s\n", "block", "A ms", "B ms", "B-A ms", "B/A", "max |A-B|")
	for i := range r.ReportA.Blocks {
		a, bb := r.ReportA.Blocks[i].WallMS, r.ReportB.Blocks[i].WallMS
		fmt.Fprintf(&b, "%5d %10.1f %10.1f %+10.1f %8.2f %12.3g\n", i, a, bb, bb-a, bb/max(a, 1e-9), r.BlockDiff[i])
	}
	fmt.Fprintf(&b, "%5s %10.1f %10.1f %+10.1f %8s %12.3g\n", "merger", r.ReportA.MergerMS, r.ReportB.MergerMS,
		r.ReportB.MergerMS-r.ReportA.MergerMS, "", r.MergerDiff)
	fmt.Fprintf(&b, "%5s %10.1f %10.1f %+10.1f\n", "total", r.ReportA.Totals.WallMS, r.ReportB.Totals.WallMS,
		r.ReportB.Totals.WallMS-r.ReportA.Totals.WallMS)
	return b.String()
}
