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
	in     *Inspector
	a, b   *settingsForm
	bars   *widgets.Bars
	table  *widget.Label
	result *widget.Label
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
	return p
}

func (p *comparePanel) content() fyne.CanvasObject {
	run := widget.NewButton("Compare", p.run)
	run.Importance = widget.HighImportance
	forms := container.NewGridWithColumns(2,
		container.NewVBox(widget.NewLabelWithStyle("A", fyne.TextAlignCenter, fyne.TextStyle{Bold: true}), p.a.form()),
		container.NewVBox(widget.NewLabelWithStyle("B", fyne.TextAlignCenter, fyne.TextStyle{Bold: true}), p.b.form()))
	top := container.NewVBox(forms, run, p.result)
	split := container.NewVSplit(p.bars, container.NewVScroll(p.table))
	return container.NewBorder(top, nil, nil, nil, split)
}

func (p *comparePanel) run() {
	a, err := p.a.Settings()
	if err == nil {
		var b engine.Settings
		if b, err = p.b.Settings(); err == nil {
			p.result.SetText(fmt.Sprintf("running A (%s), then B (%s)…", a.Describe(), b.Describe()))
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
}

// reportRows are a report's bar parts, in timingParts order.
func reportRows(rep *engine.Report) [][]float64 {
	rows := make([][]float64, len(rep.Blocks))
	for i, b := range rep.Blocks {
		rows[i] = []float64{b.WaitMS, b.AttentionMS, b.MLPMS}
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
