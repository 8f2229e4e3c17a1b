package ui

// matrixpane.go: the whole attention matrix of the selected block and head (or the mean of
// heads) over the query's segment, in the attention tab: queries down, keys across,
// max-pooled by engine/probe to at most matrixSide cells a side (and said so), the query's
// row outlined; drag a rectangle to zoom into it, "whole" to go back. Computed off the UI
// goroutine, only while shown, once per block, head, segment and region.
//
// Invariant: the matrix shown is of Sel's block and head and of the segment that holds
// Sel's query, and a hover names the entries of exactly the cell under the pointer. The
// mutation that would silently break it: keeping the zoomed region across a change of
// segment — the same numbers then name rows of another image.

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

// matrixSide bounds the cells per side: a 5,120-patch segment is shown as 256 x 256 cells,
// each the largest of 20 x 20 entries.
const matrixSide = 256

type matrixPane struct {
	in      *Inspector
	view    *widgets.MatrixView
	legend  *widgets.Legend
	caption *widget.Label
	hover   *widget.Label
	whole   *widget.Button
	large   *widget.Button // the matrix in a window-sized dialog

	seg    backend.Segment
	region probe.MatrixRegion // of seg; the whole matrix after a new segment or run
	within string             // the run and segment region belongs to
	key    string             // what m is
	m      *probe.PooledMatrix
	job    control.Latest // the matrix in the making

	largeView *widgets.MatrixView // the last large view shown (tests)
}

func (p *matrixPane) init(in *Inspector) {
	p.in = in
	p.view = widgets.NewMatrixView()
	p.view.OnZoom = p.zoom
	p.view.OnHover = p.hovered
	p.legend = widgets.NewLegend()
	p.caption = widget.NewLabel("Open this tab to compute the matrix.")
	p.caption.Wrapping = fyne.TextWrapWord
	p.hover = widget.NewLabel("")
	p.hover.TextStyle = fyne.TextStyle{Monospace: true}
	p.whole = widget.NewButton("whole", func() {
		p.region = probe.MatrixRegion{}
		p.refresh(true)
	})
}

func (p *matrixPane) content() fyne.CanvasObject {
	p.large = widget.NewButton("large", p.showLarge)
	bottom := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(p.whole, p.large), p.hover), p.legend, p.caption)
	return container.NewBorder(nil, bottom, nil, nil, p.view)
}

// clear empties the view (a run that has not reached the selected block), saying why; a
// matrix in the making is dropped.
func (p *matrixPane) clear(why string) {
	p.job.Cancel()
	p.m, p.key = nil, ""
	p.view.SetData(0, 0, nil, widgets.Viridis, widgets.Scale{})
	p.legend.SetScale(widgets.Viridis, widgets.Scale{Constant: true}, "")
	p.caption.SetText(why)
}

// refresh shows the matrix for the selection, computing it when shown and not yet there.
func (p *matrixPane) refresh(shown bool) {
	in, s := p.in, p.in.Snap
	if !s.Loaded() || !shown {
		return
	}
	if in.Sel.Block >= s.Next {
		p.clear(fmt.Sprintf("block %d has not run yet", in.Sel.Block))
		return
	}
	p.seg = s.Layout.SegmentOf(in.Sel.Block, in.Sel.Query)
	L := p.seg.End - p.seg.Start
	if within := fmt.Sprintf("%p/%d", s.Probes, p.seg.Start); within != p.within || p.region == (probe.MatrixRegion{}) {
		p.within, p.region = within, probe.Whole(L)
	}
	key := fmt.Sprintf("%s/%d/%d/%v", p.within, in.Sel.Block, in.Sel.Head, p.region)
	if key == p.key && p.m != nil {
		p.draw()
		return
	}
	probes, b, h, seg, region := s.Probes, in.Sel.Block, in.Sel.Head, p.seg, p.region
	p.caption.SetText(fmt.Sprintf("computing the %d x %d attention matrix of block %d, %s…", L, L, b, headName(h)))
	p.job.Start(in.Ctl, func(ctx context.Context) (any, error) {
		return probes.AttentionMatrix(ctx, b, h, seg, region, matrixSide)
	}, func(v any, err error) {
		if err != nil {
			p.caption.SetText("attention matrix: " + err.Error())
			return
		}
		p.m, p.key = v.(*probe.PooledMatrix), key
		p.draw()
	})
}

// draw paints the matrix on the window's colormap and scale options (from 0; the query
// is not left out: it is a row here) and outlines the query's row.
func (p *matrixPane) draw() {
	in, m := p.in, p.m
	cm, sc := in.maps.opts.heatmapScale([][]float32{m.Vals}, in.Sel.Colors, true, -1)
	p.view.SetData(m.Rows, m.Cols, m.Vals, cm, sc)
	r, _ := m.CellOf(in.Sel.Query-m.Segment.Start, m.Region.Col0)
	p.view.SetMarkedRow(r)
	unit := "attention probability"
	if d := describeScale(sc, ""); d != "" {
		unit += " · " + d
	}
	if m.Pooled() {
		unit += " · each cell the max of its entries"
	}
	p.legend.SetScale(cm, sc, unit)
	p.caption.SetText(p.describe())
}

// showLarge shows the matrix (the same cells, scale and query row) in a dialog of nearly the
// window's size: in the tab it is a thumbnail on a laptop screen.
func (p *matrixPane) showLarge() {
	if p.m == nil {
		return
	}
	in, m := p.in, p.m
	v := widgets.NewMatrixView()
	cm, sc := in.maps.opts.heatmapScale([][]float32{m.Vals}, in.Sel.Colors, true, -1)
	v.SetData(m.Rows, m.Cols, m.Vals, cm, sc)
	r, _ := m.CellOf(in.Sel.Query-m.Segment.Start, m.Region.Col0)
	v.SetMarkedRow(r)
	legend := widgets.NewLegend()
	legend.SetScale(cm, sc, "attention probability")
	caption := widget.NewLabel(p.describe())
	caption.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom(fmt.Sprintf("Attention matrix: block %d, %s", in.Sel.Block, headName(in.Sel.Head)), "Close",
		container.NewBorder(nil, container.NewVBox(legend, caption), nil, nil, v), in.Win)
	sz := in.Win.Canvas().Size()
	d.Resize(fyne.NewSize(sz.Width*0.92, sz.Height*0.92))
	in.showDialog(d)
	p.largeView = v
}

// describe says what the matrix shows.
func (p *matrixPane) describe() string {
	in, m := p.in, p.m
	L := m.Segment.End - m.Segment.Start
	g := m.Region
	txt := fmt.Sprintf("Block %d, %s: attention of the %d patches of the query's image (rows: queries, columns: keys; the query's row outlined).",
		in.Sel.Block, headName(in.Sel.Head), L)
	if g != probe.Whole(L) {
		txt += fmt.Sprintf(" Zoomed to queries %d–%d x keys %d–%d.", g.Row0, g.Row1-1, g.Col0, g.Col1-1)
	}
	if m.Pooled() {
		txt += fmt.Sprintf(" Downsampled to %d x %d cells by max-pooling: each cell is the largest of %d x %d entries.", m.Rows, m.Cols, m.RowStep, m.ColStep)
	}
	return txt + " Drag a rectangle to zoom in."
}

// zoom shows the entries under cells [r0, r1) x [c0, c1).
func (p *matrixPane) zoom(r0, r1, c0, c1 int) {
	if p.m == nil {
		return
	}
	a, b := p.m.CellRegion(r0, c0), p.m.CellRegion(r1-1, c1-1)
	g := probe.MatrixRegion{Row0: a.Row0, Row1: b.Row1, Col0: a.Col0, Col1: b.Col1}
	if g == p.m.Region {
		return
	}
	p.region = g
	p.refresh(true)
}

// hovered names the cell under the pointer.
func (p *matrixPane) hovered(r, c int) {
	m := p.m
	if m == nil || r < 0 || c < 0 || r >= m.Rows || c >= m.Cols {
		p.hover.SetText("")
		return
	}
	g, v := m.CellRegion(r, c), m.Vals[r*m.Cols+c]
	pos := p.in.Snap.Layout.Pos
	at := func(i int) string {
		q := pos[m.Segment.Start+i]
		return fmt.Sprintf("%d (r%d c%d)", m.Segment.Start+i, q.Row, q.Col)
	}
	if g.Row1-g.Row0 == 1 && g.Col1-g.Col0 == 1 {
		p.hover.SetText(fmt.Sprintf("query %s → key %s: %.4g", at(g.Row0), at(g.Col0), v))
		return
	}
	p.hover.SetText(fmt.Sprintf("queries %d–%d → keys %d–%d: max %.4g",
		m.Segment.Start+g.Row0, m.Segment.Start+g.Row1-1, m.Segment.Start+g.Col0, m.Segment.Start+g.Col1-1, v))
}
