package ui

// compare.go: the same image under two settings, measured as a benchmark measures
// (engine.CompareSessions: a warm-up pass each, then the sides interleaved over the passes):
// per-block medians and ranges side by side, B/A with its 95% interval and the verdict
// ("within noise" when the interval holds 1), and the largest difference between the two
// sides' outputs (0 for settings that must not change them: the engine is deterministic),
// with where it lies on the image.
//
// Invariant: row i of the table is block i of both sides, and what is shown is marked as
// the previous result while a new Compare runs or waits. Mutations that would silently break
// it: sorting one side by time; leaving the last table unmarked under a new Compare.

import (
	"fmt"
	"math"
	"strconv"
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
	reps        *widget.Entry          // timed passes per side
	blocks      *widget.Entry          // blocks 0..N-1 only ("" or "all": every block and the merger)
	stale       *widget.Label          // "previous result" while a new Compare runs or waits
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
	p.result = widget.NewLabel("Pick two settings and press Compare: each side runs the current image from block 0, a warm-up pass " +
		"first, then the passes alternate A B B A…; the verdict comes from B/A's interval over the pairs.")
	p.result.Wrapping = fyne.TextWrapWord
	p.runBtn = widget.NewButton("Compare", p.run)
	p.runBtn.Importance = widget.HighImportance
	p.reps = widget.NewEntry()
	p.reps.SetText(strconv.Itoa(engine.DefaultCompareReps))
	p.blocks = widget.NewEntry()
	p.blocks.SetPlaceHolder("all")
	p.stale = widget.NewLabel("")
	p.stale.Importance = widget.WarningImportance
	p.stale.Wrapping = fyne.TextWrapWord
	p.stale.Hide()
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
	side := func(name string, f *settingsForm) fyne.CanvasObject {
		return container.NewVBox(widget.NewLabelWithStyle(name, fyne.TextAlignCenter, fyne.TextStyle{Bold: true}), f.form())
	}
	forms := container.NewGridWithColumns(2, side("A", p.a), side("B", p.b))
	// The button, the passes and blocks, and both sides' progress stay in view at any
	// height: they are above the scrolled forms, not in them.
	knobs := container.NewHBox(p.runBtn, widget.NewLabel("passes"), withTip(sized(p.reps, 56), tipComparePasses),
		widget.NewLabel("blocks"), withTip(sized(p.blocks, 56), tipCompareBlocks))
	bars := container.NewGridWithColumns(2, container.NewBorder(nil, nil, widget.NewLabel("A"), nil, p.sides[0]),
		container.NewBorder(nil, nil, widget.NewLabel("B"), nil, p.sides[1]))
	top := container.NewVBox(container.NewBorder(nil, nil, knobs, nil, bars), p.result)
	diff := container.NewBorder(container.NewHBox(widget.NewLabel("where they differ: output of"), p.diffOf), p.diffKey, nil, nil, p.diffView)
	results := container.NewAppTabs(
		container.NewTabItem("timings", container.NewBorder(p.stale, nil, nil, nil, container.NewVSplit(p.bars, container.NewScroll(p.table)))),
		container.NewTabItem("difference map", container.NewBorder(nil, nil, nil, nil, diff)))
	// A split, not a border: a border gives a scroll its minimum (one line), which hid the
	// forms at 1280x720; the user can drag the divider.
	p.formScroll = container.NewVScroll(forms)
	split := container.NewVSplit(p.formScroll, results)
	split.Offset = 0.45
	return container.NewBorder(top, nil, nil, nil, split)
}

// sized gives an entry a width of its own (an HBox would shrink it to its placeholder).
func sized(e *widget.Entry, w float32) fyne.CanvasObject {
	return container.NewGridWrap(fyne.NewSize(w, e.MinSize().Height), e)
}

const (
	tipComparePasses = "Timed passes per side, after one warm-up pass each; the sides alternate A B B A … so that a drift " +
		"of the machine's speed falls on both. More passes narrow the interval of B/A."
	tipCompareBlocks = "Time blocks 0 to N-1 only (no merger), to iterate in seconds; empty or \"all\": every block and the merger."
)

// progress follows the Compare in flight: the button is off while it runs, each side's bar
// follows its pass, the result line says which pass runs.
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
		what := fmt.Sprintf("pass %d of %d", cp.Rep+1, cp.Reps)
		if cp.Rep < 0 {
			what = "warm-up pass"
		}
		p.result.SetText(fmt.Sprintf("measuring: %s, side %s, block %d of %d…", what, "AB"[cp.Side:cp.Side+1], cp.Blocks, cp.Depth))
	}
}

// options reads the passes and blocks fields.
func (p *comparePanel) options() (engine.CompareOptions, error) {
	var opt engine.CompareOptions
	var err error
	if opt.Reps, err = strconv.Atoi(strings.TrimSpace(p.reps.Text)); err != nil || opt.Reps < 1 || opt.Reps > engine.MaxCompareReps {
		return opt, fmt.Errorf("passes %q: want a whole number from 1 to %d", p.reps.Text, engine.MaxCompareReps)
	}
	if t := strings.TrimSpace(p.blocks.Text); t != "" && t != "all" {
		if opt.Blocks, err = strconv.Atoi(t); err != nil || opt.Blocks < 1 {
			return opt, fmt.Errorf("blocks %q: want a number of blocks (from block 0), or all", p.blocks.Text)
		}
	}
	return opt, nil
}

func (p *comparePanel) run() {
	a, err := p.a.Settings()
	var b engine.Settings
	var opt engine.CompareOptions
	if err == nil {
		b, err = p.b.Settings()
	}
	if err == nil {
		opt, err = p.options()
	}
	if err != nil {
		p.result.SetText(err.Error())
		return
	}
	p.result.SetText(fmt.Sprintf("A (%s) and B (%s): a warm-up pass each, then %d passes each, interleaved…", a.Describe(), b.Describe(), opt.Reps))
	for _, bar := range p.sides {
		bar.SetValue(0)
	}
	if p.last != nil {
		p.stale.SetText("previous result (a new Compare runs or waits): A = " + p.last.A.Settings.Describe() + ", B = " + p.last.B.Settings.Describe())
		p.stale.Show()
	}
	p.in.Ctl.Compare(a, b, opt)
}

func (p *comparePanel) show(r *CompareResult) {
	p.stale.Hide()
	p.bars.SetSeries(widgets.Series{Name: "A", Rows: medianRows(r.A)}, widgets.Series{Name: "B", Rows: medianRows(r.B)})
	p.table.SetText(compareTable(r))
	outputs := "identical outputs"
	if r.MaxOutputDiff > 0 {
		outputs = fmt.Sprintf("outputs differ by at most %.3g", r.MaxOutputDiff)
	}
	p.result.SetText(fmt.Sprintf("A: %s.  B: %s.  %s.  %s (max |A−B| over %s).", r.A.Settings.Describe(), r.B.Settings.Describe(),
		r.Summary(), outputs, comparedOutputs(r.Comparison)))
	p.last = r
	var blocks []string
	for i := range r.PatchDiffs {
		blocks = append(blocks, fmt.Sprintf("block %d", i))
	}
	p.diffOf.Options = blocks
	p.diffOf.SetSelectedIndex(len(blocks) - 1) // the last block: where differences have grown most
	p.showDiff()
}

// comparedOutputs names what a Comparison compared.
func comparedOutputs(c *engine.Comparison) string {
	if c.Merger {
		return "every block output and the mergers"
	}
	return fmt.Sprintf("the outputs of blocks 0-%d", c.Blocks-1)
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
	_, hi := rangeOf(vals)
	if hi == 0 { // identical: the photo untinted, the key says so
		p.diffView.SetOverlay(nil, widgets.Magma, 0, 1)
		p.diffCaption = fmt.Sprintf("block %d: identical — A and B give the same bits in every patch", i)
		p.diffKey.SetScale(widgets.Magma, widgets.Scale{Lo: 0, Hi: 0, Constant: true}, p.diffCaption)
		return
	}
	p.diffCaption = fmt.Sprintf("block %d: max over channels of |A−B| per patch, up to %.3g", i, hi)
	p.diffView.SetOverlay(vals, widgets.Magma, 0, hi)
	p.diffKey.SetRange(widgets.Magma, 0, hi, p.diffCaption)
}

// medianRows are a side's per-block medians as bar parts, in timingParts order.
func medianRows(s engine.SideTimes) [][]float64 {
	rows := make([][]float64, len(s.BlockMedianS))
	for i := range rows {
		rows[i] = barParts(1e3*s.WaitMedianS[i], 1e3*s.AttentionMedianS[i], 1e3*s.MLPMedianS[i], 1e3*s.DeepstackMedianS[i], 1e3*s.BlockMedianS[i])
	}
	return rows
}

// compareTable lists, per block, each side's median over its passes with their range, B/A of
// the medians and the max output difference; then the merger, the totals and the ratio's
// interval over the paired passes.
func compareTable(r *CompareResult) string {
	var b strings.Builder
	rng := func(s engine.SideTimes, i int) string {
		lo, hi := math.Inf(1), 0.0
		for _, p := range s.Passes {
			lo, hi = min(lo, p.BlockS[i]), max(hi, p.BlockS[i])
		}
		return fmt.Sprintf("%.1f (%.1f-%.1f)", 1e3*s.BlockMedianS[i], 1e3*lo, 1e3*hi)
	}
	fmt.Fprintf(&b, "%6s %22s %22s %7s %12s\n", "block", "A ms (min-max)", "B ms (min-max)", "B/A", "max |A-B|")
	for i := range r.Blocks {
		a, bb := r.A.BlockMedianS[i], r.B.BlockMedianS[i]
		fmt.Fprintf(&b, "%6d %22s %22s %7.3f %12.3g\n", i, rng(r.A, i), rng(r.B, i), bb/max(a, 1e-12), r.BlockDiff[i])
	}
	if r.Merger {
		fmt.Fprintf(&b, "%6s %22.1f %22.1f %7.3f %12.3g\n", "merger", 1e3*r.A.MergerMedianS, 1e3*r.B.MergerMedianS,
			r.B.MergerMedianS/max(r.A.MergerMedianS, 1e-12), r.MergerDiff)
	}
	total := func(s engine.SideTimes) string {
		return fmt.Sprintf("%.1f (%.1f-%.1f)", 1e3*s.MedianS, 1e3*s.MinS, 1e3*s.MaxS)
	}
	fmt.Fprintf(&b, "%6s %22s %22s %7.3f\n", "total", total(r.A), total(r.B), r.Ratio)
	if r.IntervalNote != "" {
		fmt.Fprintf(&b, "B/A %.3f: %s: %s\n", r.Ratio, r.IntervalNote, r.Verdict)
	} else {
		fmt.Fprintf(&b, "B/A %.3f, 95%% interval %.3f-%.3f over %d pairs of passes: %s\n", r.Ratio, r.RatioLow, r.RatioHigh, r.Reps, r.Verdict)
	}
	for _, x := range []struct {
		side string
		nf   *engine.NonFinite
	}{{"A", r.NonFiniteA}, {"B", r.NonFiniteB}} {
		if x.nf != nil { // the differences above are not numbers to read
			fmt.Fprintf(&b, "side %s: %s\n", x.side, x.nf)
		}
	}
	return b.String()
}
