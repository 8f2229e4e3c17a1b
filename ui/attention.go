package ui

// attention.go: the attention tab — head choice, every head's map for the selected block
// and query (on the image panel's scale: each head its own, or one shared), the top attended
// patches (the query left out when it is left out of the scale), and below either the block
// x head chart of mean attention distance or entropy, or the whole attention matrix of the
// selected block and head over the query's segment (max-pooled to fit, drag to zoom).
//
// Invariant: the head grid, the top-k list, the matrix and the image overlay show the same
// block and query (Inspector.Sel); the mutation that would silently break it: computing the
// grid for the block that just ran instead of the selected one.

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

type attentionPanel struct {
	in      *Inspector
	head    *widget.Select
	grid    *widgets.HeadGrid
	topk    *widget.Label
	topHead *widget.Label // what the list ranks: it follows the overlay, as the image's marks do
	matrix  *widgets.Matrix
	metric  *widget.RadioGroup
	note    *widget.Label
	drawn   string // what the block x head matrix shows (run, blocks, metric): a hover redraws only its selection
	base    struct {
		of       *probe.Store // the run whose uniform baseline this is
		windowed bool         // for its windowed blocks (else its whole-frame ones)
		dist, H  float64
	}
	lower *container.AppTabs
	mtx   matrixPane
}

func newAttentionPanel(in *Inspector) *attentionPanel {
	a := &attentionPanel{in: in}
	a.head = widget.NewSelect([]string{"mean of heads"}, func(s string) { in.SelectHead(parseHead(s)) })
	a.grid = widgets.NewHeadGrid(func(h int) { a.head.SetSelected(headName(h)) })
	a.topk = widget.NewLabel("")
	a.topHead = widget.NewLabelWithStyle("Most attended patches", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	a.topk.TextStyle = fyne.TextStyle{Monospace: true}
	a.matrix = widgets.NewMatrix(func(block, head int) {
		in.Sel.Block = block
		a.head.SetSelected(headName(head))
	})
	a.metric = widget.NewRadioGroup([]string{"mean distance", "entropy"}, func(string) { a.drawMatrix() })
	a.metric.Horizontal = true
	a.metric.SetSelected("mean distance")
	a.note = widget.NewLabel("")
	a.note.Wrapping = fyne.TextWrapWord
	a.mtx.init(in)
	return a
}

func parseHead(s string) int {
	var h int
	if _, err := fmt.Sscanf(s, "head %d", &h); err == nil {
		return h
	}
	return -1
}

func (a *attentionPanel) content() fyne.CanvasObject {
	top := container.NewBorder(nil, nil, widget.NewLabel("head"), nil, a.head)
	heads := container.NewBorder(widget.NewLabelWithStyle("All heads, this block and query", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, a.grid)
	// The tab names the chart: no title of its own, so the matrix and its note fit at 1280x720.
	chart := container.NewBorder(a.metric, a.note, nil, nil, a.matrix)
	scroll := container.NewVScroll(a.topk)
	scroll.SetMinSize(fyne.NewSize(0, 96)) // the list scrolls rather than push the chart off a laptop screen
	topk := container.NewBorder(a.topHead, nil, nil, nil, scroll)
	a.lower = container.NewAppTabs(container.NewTabItem("Every block x head", chart),
		container.NewTabItem("Attention matrix", a.mtx.content()))
	a.lower.OnSelected = func(*container.TabItem) { a.mtx.refresh(a.matrixShown()) }
	split := container.NewVSplit(container.NewBorder(nil, topk, nil, nil, heads), a.lower)
	split.SetOffset(0.48)
	return container.NewBorder(top, nil, nil, nil, split)
}

// matrixShown says whether the attention matrix is on screen (it is computed only then).
func (a *attentionPanel) matrixShown() bool { return a.lower != nil && a.lower.SelectedIndex() == 1 }

func (a *attentionPanel) setHeads(n int) {
	opts := []string{"mean of heads"}
	for h := 0; h < n; h++ {
		opts = append(opts, headName(h))
	}
	a.head.Options = opts
	a.head.SetSelected(headName(a.in.Sel.Head))
}

func (a *attentionPanel) refresh() {
	in, s := a.in, a.in.Snap
	if a.head.Selected != headName(in.Sel.Head) {
		a.head.SetSelected(headName(in.Sel.Head))
	}
	if in.Sel.Block >= s.Next { // nothing of another run stays on show: the panels say why they are empty
		why := fmt.Sprintf("block %d has not run yet", in.Sel.Block)
		a.topk.SetText(why)
		a.grid.SetMaps(nil, patchGrid(s), widgets.Viridis)
		a.refreshStats() // this run's blocks only
		a.mtx.clear(why)
		return
	}
	a.drawHeads()
	a.drawTopK()
	a.refreshStats()
	a.mtx.refresh(a.matrixShown())
}

// drawHeads shows every head's row on the image's scale options (the query uncoloured when
// it is left out of the scale).
func (a *attentionPanel) drawHeads() {
	in, s := a.in, a.in.Snap
	e, err := in.maps.rows.Of(s.Probes, in.Sel.Block, in.Sel.Query)
	if err != nil {
		return // computing: the grid keeps the last maps until these land
	}
	cm, scales := a.headScales(e.Rows)
	maps := make([][]float32, len(e.Rows))
	for h, r := range e.Rows {
		maps[h] = in.maps.opts.withoutQuery(r, true, in.Sel.Query)
	}
	a.grid.SetMapScales(maps, patchGrid(s), cm, scales)
	a.grid.SetSelected(in.Sel.Head)
}

// drawTopK lists the most attended patches of the selected head (or the mean), without the
// query when it is left out of the scale.
func (a *attentionPanel) drawTopK() {
	in, s := a.in, a.in.Snap
	var row []float32
	switch in.Sel.Overlay {
	case OverlayAttentionTo, OverlayRollout, OverlayRolloutWhole: // the map on the image, whose top patches are its numbered marks
		a.topHead.SetText(map[string]string{OverlayAttentionTo: "Patches attending most to the query",
			OverlayRollout: "Most attended patches by rollout", OverlayRolloutWhole: "Most attended patches by the whole image's rollout"}[in.Sel.Overlay])
		if row, _, _ = in.selectedMap(); row == nil {
			return // the map is computed: the list stays until it lands
		}
	default:
		a.topHead.SetText("Most attended patches")
		e, err := in.maps.rows.Of(s.Probes, in.Sel.Block, in.Sel.Query)
		if err == control.ErrComputing {
			return // the list stays until the rows land
		}
		if err == nil {
			row, err = e.Pick(in.Sel.Head)
		}
		if err != nil {
			a.topk.SetText(err.Error())
			return
		}
	}
	var b strings.Builder
	q := s.Layout.Pos[in.Sel.Query]
	fmt.Fprintf(&b, "query: patch %d (row %d, col %d)", in.Sel.Query, q.Row, q.Col)
	ranked := in.maps.opts.withoutQuery(row, true, in.Sel.Query)
	if in.maps.opts.ExcludeQuery {
		fmt.Fprintf(&b, ", itself %.4f (left out of the list)", row[in.Sel.Query])
	}
	b.WriteString("\n")
	for i, p := range topK(ranked, 8) {
		pos := s.Layout.Pos[p]
		fmt.Fprintf(&b, "%d. patch %4d  row %2d col %2d  %.4f\n", i+1, p, pos.Row, pos.Col, row[p])
	}
	a.topk.SetText(strings.TrimRight(b.String(), "\n"))
}

// refreshStats draws the chart and has the row service measure distance and entropy for
// the blocks that ran since (each block once per run); the chart is drawn again when they
// land.
func (a *attentionPanel) refreshStats() {
	s := a.in.Snap
	a.drawMatrix()
	from, to := a.in.maps.rows.MeasureHeads(s.Probes, s.Next, func(err error) {
		if err != nil {
			a.note.SetText(err.Error())
			return
		}
		a.refreshStats() // more blocks may have arrived meanwhile
	})
	if from < to {
		a.note.SetText(fmt.Sprintf("computing mean attention distance and entropy for blocks %d-%d…", from, to-1))
	}
}

// drawMatrix draws the block x head chart of the chosen metric and its note; when only the
// selection changed (a hover, a click), it moves only the outline.
func (a *attentionPanel) drawMatrix() {
	s := a.in.Snap
	if !s.Loaded() {
		return
	}
	data, unit, format := a.metricData(a.in.maps.rows.HeadStats(s.Probes))
	key := fmt.Sprintf("%p/%d/%s/%dx%d", s.Probes, len(data), a.metric.Selected, s.Config.Depth, s.Config.Heads)
	if key == a.drawn { // the same numbers: a hover or a click moved only the selection
		a.matrix.SetSelected(a.in.Sel.Block, a.in.Sel.Head)
		return
	}
	a.drawn = key
	rows, cols := s.Config.Depth, s.Config.Heads
	a.matrix.SetData(rows, cols, blockHeadValues(data, rows, cols), widgets.Viridis, "block", "head", format)
	a.matrix.SetSelected(a.in.Sel.Block, a.in.Sel.Head)
	if len(data) == 0 { // a new run: no block of it measured yet (nothing of the last one shown)
		a.note.SetText(fmt.Sprintf("%s per head: no block of this run has been measured yet", a.metric.Selected))
		return
	}
	a.note.SetText(a.baselineNote(unit))
}

// metricData is the chosen metric's statistics, [block][head], its unit and how a cell
// names its value.
func (a *attentionPanel) metricData(hs *control.HeadStats) ([][]float64, string, func(float64) string) {
	if a.metric.Selected == "entropy" {
		return hs.Entropy, "nats", func(v float64) string { return fmt.Sprintf("%.3f nats", v) }
	}
	return hs.Dist, "patches", func(v float64) string { return fmt.Sprintf("%.2f patches", v) }
}

// blockHeadValues lays data out as rows x cols cells, block-major; blocks not measured yet
// are NaN (no colour).
func blockHeadValues(data [][]float64, rows, cols int) []float64 {
	vals := make([]float64, rows*cols)
	for i := range vals {
		vals[i] = nan()
	}
	for b := range data {
		for h, v := range data[b] {
			vals[b*cols+h] = v
		}
	}
	return vals
}

// baselineNote says what the chart shows and what uniform attention gives over the same
// queries of the selected block (the page's baseline, computed once per run and kind of
// block).
func (a *attentionPanel) baselineNote(unit string) string {
	s, blk := a.in.Snap, a.in.Sel.Block
	windowed := s.Layout.Windowed(blk)
	if a.base.of != s.Probes || a.base.windowed != windowed { // the page's, O(queries x patches)
		a.base.of, a.base.windowed = s.Probes, windowed
		a.base.dist, a.base.H = s.Probes.UniformBaseline(blk, control.HeadStatQueries)
	}
	baseline := fmt.Sprintf("%.2f patches", a.base.dist)
	if a.metric.Selected == "entropy" {
		baseline = fmt.Sprintf("%.3f nats", a.base.H)
	}
	over := "on this page"
	if windowed {
		over = fmt.Sprintf("within the windows of windowed blocks such as block %d", blk)
	} else if s.Layout.AnyWindowed() {
		over = fmt.Sprintf("over whole frames (blocks such as block %d)", blk)
	}
	return fmt.Sprintf("%s per head (%s), over up to %d query patches per block. Uniform attention %s gives %s: "+
		"a head well below it is local (distance) or focused (entropy), one near it looks nowhere in particular. Click a cell to show that block and head.",
		a.metric.Selected, unit, control.HeadStatQueries, over, baseline)
}

// headScales are the head grid's colormap and scales for maps (every head's row of one
// block and query): the shared scale of every head of every block run when shared, else
// each head its own under the options.
func (a *attentionPanel) headScales(maps [][]float32) (widgets.Colormap, []widgets.Scale) {
	in, o := a.in, a.in.maps.opts
	if o.Shared {
		all, err := in.maps.rows.HeadsOf(in.Snap.Probes, in.Snap.Next, in.Sel.Query)
		if err == nil {
			cm, sc := o.heatmapScale(all, in.Sel.Colors, true, in.Sel.Query)
			return cm, []widgets.Scale{sc}
		}
	}
	cm := in.Sel.Colors
	scales := make([]widgets.Scale, len(maps))
	for h, m := range maps {
		cm, scales[h] = o.heatmapScale([][]float32{m}, in.Sel.Colors, true, in.Sel.Query)
	}
	return cm, scales
}
