package ui

// whatif.go: the "What if" tab. Pick an intervention (heads ablated, patches occluded or
// masked as keys — typed, or the map's most attended patches — a block's output or a head
// patched from another image), run
// it against the window's finished run of the same page, and see how far it travels: the
// change of each block's output and of the merger (a bar per block), where on the image a
// block's output moved (per patch, the largest |Δ| over channels), and, from a head sweep,
// each head's importance as a block x head matrix (the merger's relative change when that
// head alone is ablated). "Apply to the run" makes the intervention the window's settings,
// so every map of the Attention tab shows the intervened tower.
//
// Invariant: what is shown is of the last finished what-if (or sweep) and says which
// intervention and page it measured; while a new one runs the old stays, marked as the
// previous result. Mutation that would silently break it: drawing the difference map of one
// block with the bar chart's selection of another (the map's caption names its block).

import (
	"fmt"
	"image"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

const (
	tipWhatIfRun   = "Run the page once with these interventions and measure each block's change against the window's finished run."
	tipWhatIfSweep = "Ablate every head in turn (as chosen: zero or mean) and draw each head's importance: how far the merger " +
		"moves when that head alone is ablated. One run per head: a 27 x 16 tower is 432 runs."
	tipPatchFrom = "Activation patching: IMAGE:blocks.B.out@x0,y0,x1,y1 takes block B's output at those patches from " +
		"IMAGE's run (an image of the same page size); IMAGE:blocks.B.attn.hH@… takes head H's slice of what block B's proj reads."
	tipWhatIfApply = "Make these interventions the window's settings: the run restarts with them, and every map shows the intervened tower."
	tipTopOcclude  = "Fill \"mask patches\" with the 8 patches the image's map (the overlay shown now) ranks highest: occluded at the input."
	tipTopKeys     = "Fill \"mask as keys\" with the 8 patches the image's map ranks highest, masked as keys from the selected block on."
)

// topMasked is how many of the map's top patches the fill buttons take.
const topMasked = 8

// What a drag over the image draws while the What if tab is shown.
const (
	dragOccludes  = "draws mask patches"
	dragMasksKeys = "draws mask as keys"
	tipDragFills  = "While this tab is shown, dragging over the image outlines a rectangle of patches and writes it into " +
		"the mask chosen here (as keys: from the selected block on)."
)

type whatIfPanel struct {
	in *Inspector
	interventionFields
	patch    *widget.Entry // IMAGE:blocks.B.out@PATCHES or IMAGE:blocks.B.attn.hH@PATCHES
	runBtn   *widget.Button
	sweepBtn *widget.Button
	// fill the masks from the image map's most attended patches
	topOcclude, topKeys *widget.Button
	dragFills           *widget.RadioGroup // which mask a drag over the image draws
	applyBtn            *widget.Button
	bar                 *widget.ProgressBar
	stale               *widget.Label // "previous result" while a new one runs
	result              *widget.Label

	curve      *widgets.Bars // per block: relative change, %
	diffOf     *widget.Select
	diffView   *widgets.ImageView
	diffKey    *widgets.Legend
	results    *container.AppTabs
	before     *widgets.ImageView // the selected block's attention row, the window's run
	after      *widgets.ImageView // the same row in the intervened run
	attnKey    *widgets.Legend
	importance *widgets.Matrix
	impCaption *widget.Label
	exportBtn  *widget.Button

	last  *WhatIfResult
	sweep *SweepResult
}

func newWhatIfPanel(in *Inspector) *whatIfPanel {
	p := &whatIfPanel{in: in, interventionFields: newInterventionFields()}
	p.patch = widget.NewEntry()
	p.patch.SetPlaceHolder("b.png:blocks.1.out@0,0,4,4")
	for _, e := range append([]*widget.Entry{p.ablate, p.mask, p.maskKeys, p.keepTop, p.patch}, p.kinds...) {
		e.OnSubmitted = func(string) { p.run() } // Enter in any field runs it
	}
	p.runBtn = widget.NewButton("Run what if", p.run)
	p.runBtn.Importance = widget.HighImportance
	p.sweepBtn = widget.NewButton("Sweep heads", p.runSweep)
	p.applyBtn = widget.NewButton("Apply to the run", p.apply)
	p.topOcclude = widget.NewButton(fmt.Sprintf("map's top %d", topMasked), func() { p.fillFromMap(false) })
	p.topKeys = widget.NewButton(fmt.Sprintf("map's top %d", topMasked), func() { p.fillFromMap(true) })
	p.dragFills = widget.NewRadioGroup([]string{dragOccludes, dragMasksKeys}, nil)
	p.dragFills.Horizontal = true
	p.dragFills.SetSelected(dragOccludes)
	p.bar = widget.NewProgressBar()
	p.stale = widget.NewLabel("")
	p.stale.Importance = widget.WarningImportance
	p.stale.Hide()
	p.result = widget.NewLabel("Pick an intervention and press Run what if: the page runs once with it, and each block's output " +
		"is compared with the window's finished run of the same page.")
	p.result.Wrapping = fyne.TextWrapWord
	p.curve = widgets.NewBars([]string{"change"}, []color.Color{color.NRGBA{R: 0xd9, G: 0x5f, B: 0x0e, A: 0xff}}, "%", p.selectBlock)
	p.curve.Empty = "no what-if yet"
	p.diffOf = widget.NewSelect(nil, func(string) { p.showDiff() })
	p.diffView, p.diffKey = widgets.NewImageView(), widgets.NewLegend()
	p.before, p.after, p.attnKey = widgets.NewImageView(), widgets.NewImageView(), widgets.NewLegend()
	p.importance = widgets.NewMatrix(nil)
	p.impCaption = widget.NewLabel("Sweep heads to fill this matrix.")
	p.impCaption.Wrapping = fyne.TextWrapWord
	p.exportBtn = widget.NewButton("Export CSV…", func() { in.saveDialog(in.exportName("head-importance", ".csv"), in.ExportHeadImportanceCSV) })
	p.exportBtn.Disable()
	in.Ctl.OnWhatIfProgress = p.progress
	return p
}

func (p *whatIfPanel) content() fyne.CanvasObject {
	items := p.interventionFields.items()
	for _, it := range items { // the masks' rows end with their fill button: no row of their own
		switch it.Text {
		case "mask patches":
			it.Widget = container.NewBorder(nil, nil, nil, withTip(p.topOcclude, tipTopOcclude), it.Widget)
		case "mask as keys":
			it.Widget = container.NewBorder(nil, nil, nil, withTip(p.topKeys, tipTopKeys), it.Widget)
		}
	}
	form := widget.NewForm(append(items, widget.NewFormItem("patch from", withTip(p.patch, tipPatchFrom)),
		widget.NewFormItem("drag on the image", withTip(p.dragFills, tipDragFills)))...)
	buttons := container.NewHBox(withTip(p.runBtn, tipWhatIfRun), withTip(p.sweepBtn, tipWhatIfSweep), withTip(p.applyBtn, tipWhatIfApply))
	top := container.NewVBox(form, container.NewBorder(nil, nil, buttons, nil, p.bar), p.stale, p.result)
	diff := container.NewBorder(container.NewHBox(widget.NewLabel("where it changed: output of"), p.diffOf), p.diffKey, nil, nil, p.diffView)
	imp := container.NewBorder(container.NewBorder(nil, nil, nil, p.exportBtn, p.impCaption), nil, nil, nil, p.importance)
	sides := container.NewGridWithColumns(2,
		container.NewBorder(widget.NewLabel("before (the window's run)"), nil, nil, nil, p.before),
		container.NewBorder(widget.NewLabel("after (with the intervention)"), nil, nil, nil, p.after))
	p.results = container.NewAppTabs(
		container.NewTabItem("change per block", p.curve),
		container.NewTabItem("difference map", diff),
		container.NewTabItem("attention after", container.NewBorder(nil, p.attnKey, nil, nil, sides)),
		container.NewTabItem("head importance", imp))
	// The form, the buttons and the result line stay in view at any height; the charts take
	// the rest.
	return container.NewBorder(top, nil, nil, nil, p.results)
}

// fillFromMap writes the top patches of the selection's map (the overlay shown now, the
// query left out when the map leaves it out) into the mask field, as pixel_values rows;
// asKeys: into the key mask field, from the selected block on.
func (p *whatIfPanel) fillFromMap(asKeys bool) {
	in := p.in
	var vals []float32
	if in.Snap.Loaded() {
		vals, _, _ = in.selectedMap()
	}
	lay := in.Snap.Layout
	if vals == nil || lay == nil {
		in.say("what if: no map on the image yet (run the page and pick an overlay)", nil)
		return
	}
	var rows []string
	for _, r := range mapTopRows(in.maps.opts.withoutQuery(vals, true, in.Sel.Query), lay) {
		rows = append(rows, strconv.Itoa(r))
	}
	spec := "rows:" + strings.Join(rows, ",")
	if asKeys {
		p.maskKeys.SetText(fmt.Sprintf("%s@%d", spec, max(in.Sel.Block, 0)))
		return
	}
	p.mask.SetText(spec)
}

// dragRect writes a rectangle drawn on the image into the mask the radio names.
func (p *whatIfPanel) dragRect(r image.Rectangle) {
	spec := fmt.Sprintf("%d,%d,%d,%d", r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
	if p.dragFills.Selected == dragMasksKeys {
		p.maskKeys.SetText(fmt.Sprintf("%s@%d", spec, max(p.in.Sel.Block, 0)))
		return
	}
	p.mask.SetText(spec)
}

// mapTopRows is the topMasked highest patches of a map (by sequence index) as pixel_values
// rows, in increasing order.
func mapTopRows(vals []float32, lay *geom.Layout) []int {
	var rows []int
	for _, i := range topK(vals, topMasked) {
		rows = append(rows, lay.ProcessorRow(i))
	}
	slices.Sort(rows)
	return rows
}

// settings is the window's settings with the tab's interventions.
func (p *whatIfPanel) settings() (engine.Settings, error) {
	s := p.in.Ctl.Settings()
	field, err := p.interventionFields.read(&s)
	if err != nil {
		return s, fmt.Errorf("%s: %w", field, err)
	}
	if s.PatchFrom, _, _, _, _, err = engine.ParsePatchFrom(p.patch.Text); err != nil {
		return s, err
	}
	return s, nil
}

func (p *whatIfPanel) run() {
	s, err := p.settings()
	if err != nil {
		p.in.say("what if: "+err.Error(), err)
		return
	}
	p.markStale()
	p.in.Ctl.WhatIf(s)
}

func (p *whatIfPanel) runSweep() {
	p.markStale()
	p.in.Ctl.SweepHeads(p.ablateAs.Selected)
}

func (p *whatIfPanel) apply() {
	s, err := p.settings()
	if err != nil {
		p.in.say("what if: "+err.Error(), err)
		return
	}
	p.in.Ctl.Apply(s)
}

// markStale turns the buttons off until the work ends (progress turns them on) and marks
// what is shown as the previous result.
func (p *whatIfPanel) markStale() {
	p.runBtn.Disable()
	p.sweepBtn.Disable()
	if p.last != nil || p.sweep != nil {
		p.stale.SetText("Shown: the previous result, until this one finishes.")
		p.stale.Show()
	}
}

// progress follows the what-if or sweep in flight: the buttons are off while it runs.
func (p *whatIfPanel) progress(w WhatIfProgress) {
	if w.Running {
		p.runBtn.Disable()
		p.sweepBtn.Disable()
		p.bar.SetValue(float64(w.Done) / float64(max(w.Of, 1)))
		return
	}
	p.runBtn.Enable()
	p.sweepBtn.Enable()
	p.stale.Hide()
	if w.Err != nil {
		p.bar.SetValue(0)
		p.result.SetText("Not finished: " + w.Err.Error())
		return
	}
	p.bar.SetValue(1)
}

// show draws a finished what-if.
func (p *whatIfPanel) show(r *WhatIfResult) {
	p.last = r
	rows := make([][]float64, len(r.Blocks))
	for i, v := range r.Blocks {
		rows[i] = []float64{100 * v}
	}
	p.curve.SetSeries(widgets.Series{Rows: rows})
	p.result.SetText(whatIfSummary(r))
	opts := make([]string, len(r.PatchDiffs))
	for i := range opts {
		opts[i] = fmt.Sprintf("block %d", i)
	}
	p.diffOf.Options = opts
	p.diffOf.Refresh()
	p.selectBlock(firstMoved(r.Blocks))
}

// whatIfSummary says what was changed and how far it travelled.
func whatIfSummary(r *WhatIfResult) string {
	what := control.InterventionsOf(r.Settings)
	first := firstMoved(r.Blocks)
	if first < 0 {
		return fmt.Sprintf("%s: no block and not the merger moved by a single bit.", what)
	}
	top := 0
	for i, v := range r.Blocks {
		if v > r.Blocks[top] {
			top = i
		}
	}
	s := fmt.Sprintf("%s: the outputs move from block %d on (%.3g%% there), most at block %d (%.3g%%); the merger by %.3g%% "+
		"(relative change, ||Δ|| / ||output||, against the window's run).", what, first, 100*r.Blocks[first], top, 100*r.Blocks[top], 100*r.Merger)
	if r.KeptRows > 0 {
		s += fmt.Sprintf(" The blocks after block %d ran on %d of %d patches; their changes and the merger's are over what remained "+
			"(Compare, with this setting on one side, times the speed-up).", r.DropAfter, r.KeptRows, r.Layout.Rows())
	}
	return s
}

// firstMoved is the first block whose output changed, -1 if none.
func firstMoved(v []float64) int {
	for i, x := range v {
		if x != 0 {
			return i
		}
	}
	return -1
}

// selectBlock shows block's difference map (the first block when block < 0).
func (p *whatIfPanel) selectBlock(block int) {
	if p.last == nil || len(p.last.PatchDiffs) == 0 {
		return
	}
	block = min(max(block, 0), len(p.last.PatchDiffs)-1)
	p.curve.SetSelected(block)
	p.diffOf.SetSelectedIndex(block) // calls showDiff
}

// showDiff draws the selected block's per-patch change over the page.
func (p *whatIfPanel) showDiff() {
	r, i := p.last, p.diffOf.SelectedIndex()
	if r == nil || i < 0 || i >= len(r.PatchDiffs) || r.Page == nil {
		return
	}
	p.curve.SetSelected(i)
	g := r.Layout.Grids[0]
	p.diffView.SetImage(rgbImage(r.Page.Resized), widgets.PatchGrid{Rows: g.H, Cols: g.W,
		Index: func(row, col int) int { return r.Layout.Index(0, 0, row, col) }})
	vals := r.PatchDiffs[i]
	_, hi := rangeOf(vals)
	if hi == 0 {
		p.diffView.SetOverlay(nil, widgets.Magma, 0, 1)
		p.diffKey.SetScale(widgets.Magma, widgets.Scale{Lo: 0, Hi: 0, Constant: true},
			fmt.Sprintf("block %d: unchanged — the same bits in every patch", i))
		return
	}
	p.diffView.SetOverlay(vals, widgets.Magma, 0, hi)
	caption := fmt.Sprintf("block %d: max over channels of |Δ| per patch, up to %.3g", i, hi)
	if r.KeptRows > 0 && i > r.DropAfter {
		caption += " (dropped patches: no colour)"
	}
	p.diffKey.SetRange(widgets.Magma, 0, hi, caption)
	p.showAttention(i)
}

// showAttention draws block's attention row of the window's query and head (or the mean of
// heads) before and after the intervention, on one scale.
func (p *whatIfPanel) showAttention(block int) {
	r, s, sel := p.last, p.in.Snap, p.in.Sel
	if r == nil || r.Probes == nil || !s.Loaded() || r.Probes.KeptQK() <= block || s.Probes.KeptQK() <= block {
		p.attnKey.SetScale(widgets.Viridis, widgets.Scale{Constant: true, Empty: true}, "no attention maps: the runs did not keep q and k")
		return
	}
	if s.Layout != r.Layout {
		p.attnKey.SetScale(widgets.Viridis, widgets.Scale{Constant: true, Empty: true}, "the window's run changed since: run the what-if again")
		return
	}
	before, err1 := meanOrHeadRow(s.Probes, block, sel.Head, sel.Query)
	after, err2 := meanOrHeadRow(r.Probes, block, sel.Head, sel.Query)
	if err1 != nil || err2 != nil {
		p.attnKey.SetScale(widgets.Viridis, widgets.Scale{Constant: true, Empty: true}, fmt.Sprint("no attention maps: ", err1, err2))
		return
	}
	opts := p.in.maps.opts // the window's "skip query", as the image's maps take it
	before, after = opts.withoutQuery(before, true, sel.Query), opts.withoutQuery(after, true, sel.Query)
	g := r.Layout.Grids[0]
	grid := widgets.PatchGrid{Rows: g.H, Cols: g.W, Index: func(row, col int) int { return r.Layout.Index(0, 0, row, col) }}
	var hi float32 // the larger map's top, the skipped query (NaN) left out
	for _, row := range [][]float32{before, after} {
		for _, v := range row {
			if v > hi {
				hi = v
			}
		}
	}
	for _, v := range []*widgets.ImageView{p.before, p.after} {
		v.SetImage(rgbImage(r.Page.Resized), grid)
	}
	p.before.SetOverlay(before, widgets.Viridis, 0, hi)
	p.after.SetOverlay(after, widgets.Viridis, 0, hi)
	p.attnKey.SetRange(widgets.Viridis, 0, hi, fmt.Sprintf("block %d, %s, query patch %d: attention probability, one scale for both",
		block, headName(sel.Head), sel.Query))
}

// meanOrHeadRow is block's attention row of query for head (or the mean of heads when head < 0).
func meanOrHeadRow(st *probe.Store, block, head, query int) ([]float32, error) {
	if head >= 0 {
		return st.AttentionRow(block, head, query)
	}
	var mean []float32
	for h := range st.Heads {
		row, err := st.AttentionRow(block, h, query)
		if err != nil {
			return nil, err
		}
		if mean == nil {
			mean = make([]float32, len(row))
		}
		for i, v := range row {
			mean[i] += v / float32(st.Heads)
		}
	}
	return mean, nil
}

// showSweep draws a finished head sweep as a block x head matrix of the merger's change.
func (p *whatIfPanel) showSweep(r *SweepResult) {
	p.sweep = r
	vals := make([]float64, r.Depth*r.Heads)
	for _, row := range r.Rows {
		h, err := strconv.Atoi(row.Head)
		if err == nil && row.Block < r.Depth && h < r.Heads {
			vals[row.Block*r.Heads+h] = 100 * row.Merger
		}
	}
	p.importance.SetData(r.Depth, r.Heads, vals, widgets.Magma, "block", "head", func(v float64) string { return fmt.Sprintf("%.3g%%", v) })
	p.impCaption.SetText(fmt.Sprintf("Head importance: the merger's relative change when that head alone is ablated (%s), "+
		"%d runs against the window's run.", r.Mode, len(r.Rows)))
	p.exportBtn.Enable()
	if p.last == nil {
		p.result.SetText(fmt.Sprintf("Head sweep done: %d heads ablated one at a time (%s).", len(r.Rows), r.Mode))
	}
	p.results.SelectIndex(3)
}
