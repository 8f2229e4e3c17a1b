package ui

// imagepanel.go: the resized page with the selected overlay (the per-patch maps are of the
// tap selected in Activations), its controls (source, colormap, opacity, grid) and legend; a
// click picks the query patch, hover names it.
//
// Invariant: the overlay is always indexed by sequence (merge-window) index, the same index
// the engine uses; the mutation that would silently break it: indexing values by the raster
// position of the hovered patch.

import (
	"context"
	"fmt"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/ui/widgets"
)

type imagePanel struct {
	in       *Inspector
	view     *widgets.ImageView
	legend   *widgets.Legend
	source   *widget.Select
	colors   *widget.Select
	opacity  *widget.Slider
	grid     *widget.Check
	channel  *widget.Entry
	caption  *widget.Label
	values   []float32 // what the overlay shows now, by sequence index
	stats    tapStats  // per-patch statistics of the tap shown
	rollGen  int       // drops stale rollout results
	rollKey  string
	rollout  []float32
	rollStop context.CancelFunc // cancels the rollout in flight when another one is asked for
	syncing  bool
}

func newImagePanel(in *Inspector) *imagePanel {
	p := &imagePanel{in: in, view: widgets.NewImageView(), legend: widgets.NewLegend()}
	p.view.OnSelect = in.SelectQuery
	p.view.SetHoverText(p.hoverText)
	p.source = widget.NewSelect(Overlays, func(s string) {
		if !p.syncing {
			in.SetOverlay(s)
		}
	})
	p.colors = widget.NewSelect(widgets.ColormapNames(), func(s string) {
		cm, _ := widgets.ParseColormap(s)
		in.Sel.Colors = cm
		p.refresh()
	})
	p.opacity = widget.NewSlider(0, 1)
	p.opacity.Step = 0.05
	p.opacity.OnChanged = func(v float64) { in.Sel.Opacity = v; p.view.SetOpacity(v) }
	p.grid = widget.NewCheck("grid", func(on bool) { in.Sel.Grid = on; p.view.SetShowGrid(on) })
	p.channel = widget.NewEntry()
	p.channel.SetPlaceHolder("channel")
	p.channel.OnSubmitted = func(s string) {
		if ch, err := strconv.Atoi(s); err == nil {
			in.Sel.Channel = ch
			in.SetOverlay(OverlayChannel)
		}
	}
	p.caption = widget.NewLabel("")
	p.caption.Wrapping = fyne.TextWrapWord
	p.syncControls()
	return p
}

func (p *imagePanel) content() fyne.CanvasObject {
	controls := container.NewHBox(widget.NewLabel("overlay"), p.source, widget.NewLabel("ch"), p.channel, widget.NewLabel("colours"), p.colors, p.grid)
	opacity := container.NewBorder(nil, nil, widget.NewLabel("opacity"), nil, p.opacity)
	bottom := container.NewVBox(p.legend, p.caption)
	return container.NewBorder(container.NewVBox(controls, opacity), bottom, nil, nil, p.view)
}

// syncControls shows the selection in the controls without firing their callbacks.
func (p *imagePanel) syncControls() {
	p.syncing = true
	defer func() { p.syncing = false }()
	s := p.in.Sel
	p.source.SetSelected(s.Overlay)
	p.colors.SetSelected(s.Colors.String())
	p.opacity.SetValue(s.Opacity)
	p.grid.SetChecked(s.Grid)
	p.channel.SetText(strconv.Itoa(s.Channel))
}

func (p *imagePanel) setPage(s *Snapshot) {
	p.view.SetImage(rgbImage(s.Page.Resized), patchGrid(s))
	p.rollKey, p.rollout = "", nil
}

// refresh recomputes the overlay for the selection.
func (p *imagePanel) refresh() {
	in := p.in
	if !in.Snap.Loaded() {
		return
	}
	vals, caption := p.overlayValues()
	p.values = vals
	p.view.SetSelected(in.Sel.Query)
	lo, hi := rangeOf(vals)
	if in.Sel.Overlay == OverlayAttention || in.Sel.Overlay == OverlayRollout {
		lo = 0
	}
	p.view.SetOverlay(vals, in.Sel.Colors, lo, hi)
	p.view.SetOpacity(in.Sel.Opacity)
	p.legend.SetRange(in.Sel.Colors, lo, hi, legendCaption(in.Sel.Overlay))
	p.caption.SetText(caption)
	p.view.SetMarked(p.marks())
}

// marks are the top-5 attended patches for attention overlays.
func (p *imagePanel) marks() []int {
	if p.values == nil || (p.in.Sel.Overlay != OverlayAttention && p.in.Sel.Overlay != OverlayRollout) {
		return nil
	}
	return topK(p.values, 5)
}

func (p *imagePanel) hoverText(patch int) string {
	s := p.in.Snap
	if !s.Loaded() || patch < 0 || patch >= s.Layout.Rows() {
		return ""
	}
	pos := s.Layout.Pos[patch]
	txt := fmt.Sprintf("row %d col %d (patch %d)", pos.Row, pos.Col, patch)
	if p.values != nil {
		txt += fmt.Sprintf(": %.4g", p.values[patch])
	}
	return txt
}

// overlayValues computes the selected overlay and a caption saying what it is.
func (p *imagePanel) overlayValues() ([]float32, string) {
	in, s := p.in, p.in.Snap
	b := in.Sel.Block
	if b >= s.Next {
		return nil, fmt.Sprintf("block %d has not run yet", b)
	}
	switch in.Sel.Overlay {
	case OverlayAttention:
		return p.attentionValues()
	case OverlayRollout:
		return p.rolloutValues()
	case OverlayNone:
		return nil, ""
	case OverlayChannel:
		return p.channelValues()
	case OverlayChange:
		if in.Sel.Tap != tapOut {
			return nil, fmt.Sprintf("change ||out−in||/||in|| is defined for the block output: select the tap out (now %s)", in.Sel.Tap)
		}
	}
	st, err := p.stats.of(s, in.Sel.Tap, b)
	if err != nil {
		return nil, err.Error()
	}
	m := map[string][]float32{OverlayNorm: st.Norm, OverlayMean: st.Mean, OverlayMaxAbs: st.MaxAbs, OverlayChange: st.Change}
	return m[in.Sel.Overlay], fmt.Sprintf("block %d %s: %s per patch", b, tapCaption(in.Sel.Tap), in.Sel.Overlay)
}

// channelValues is one channel of the selected tap of the selected block, per patch.
func (p *imagePanel) channelValues() ([]float32, string) {
	in, s := p.in, p.in.Snap
	b, ch, tap := in.Sel.Block, in.Sel.Channel, in.Sel.Tap
	_, w, err := tapValues(s, tap, b)
	if err != nil {
		return nil, err.Error()
	}
	if ch < 0 || ch >= w {
		return nil, fmt.Sprintf("channel %d is outside 0..%d", ch, w-1)
	}
	m, err := s.Probes.TapChannelMap(tap, b, ch)
	if err != nil {
		return nil, err.Error()
	}
	return m, fmt.Sprintf("block %d %s, channel %d", b, tapCaption(tap), ch)
}

// tapCaption names a tap in captions: "output" for out.
func tapCaption(tap string) string {
	if tap == tapOut {
		return "output"
	}
	return "tap " + tap
}

func (p *imagePanel) attentionValues() ([]float32, string) {
	in := p.in
	row, err := attentionRow(in.Snap, in.Sel.Block, in.Sel.Head, in.Sel.Query)
	if err != nil {
		return nil, err.Error()
	}
	return row, fmt.Sprintf("block %d, %s: attention of the query patch (outlined) over the image", in.Sel.Block, headName(in.Sel.Head))
}

// notKept explains a missing full output: the page was over the probe budget.
const notKept = "block outputs are not kept for this page (over the probe memory budget): lower max pixels to see channels"

// legendCaption names the legend's unit.
func legendCaption(overlay string) string {
	switch overlay {
	case OverlayAttention, OverlayRollout:
		return "attention probability"
	case OverlayChange:
		return "||out − in|| / ||in||"
	}
	return overlay
}

func headName(h int) string {
	if h < 0 {
		return "mean of heads"
	}
	return fmt.Sprintf("head %d", h)
}

// rolloutValues shows the cached rollout or starts computing it off the UI goroutine.
func (p *imagePanel) rolloutValues() ([]float32, string) {
	in := p.in
	key := fmt.Sprintf("%d/%d/%d", in.Snap.Gen, in.Sel.Block, in.Sel.Query)
	caption := fmt.Sprintf("attention rollout from block 0 to block %d for the query patch", in.Sel.Block)
	if key == p.rollKey && p.rollout != nil {
		return p.rollout, caption
	}
	p.rollGen++
	if p.rollStop != nil {
		p.rollStop()
	}
	ctx, stop := context.WithCancel(context.Background())
	p.rollStop = stop
	gen, probes, q, upTo := p.rollGen, in.Snap.Probes, in.Sel.Query, in.Sel.Block
	go func() {
		vals, err := probes.Rollout(ctx, q, upTo)
		in.Ctl.do(func() {
			if gen != p.rollGen {
				return // superseded (and cancelled)
			}
			if err != nil {
				p.caption.SetText("rollout: " + err.Error())
				return
			}
			p.rollKey, p.rollout = key, vals
			p.refresh()
		})
	}()
	return nil, caption + " (computing…)"
}
