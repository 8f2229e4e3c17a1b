package ui

// activations.go: the activations tab — which per-patch map the image shows (L2 norm,
// mean, max |x|, change ||out-in||/||in||, one channel), a histogram of the block's output
// values, their mean/std/min/max, and the channels with the largest mean |x|.
//
// Invariant: the histogram and summary are of the selected block's output, all S*D values;
// the mutation that would silently break it: summarising the per-patch map instead.

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/widgets"
)

type activationPanel struct {
	in       *Inspector
	metric   *widget.RadioGroup
	hist     *widgets.Histogram
	summary  *widget.Label
	channels *widget.List
	top      []probe.ChannelScore
	drawn    string
}

var activationMetrics = []string{OverlayNorm, OverlayMean, OverlayMaxAbs, OverlayChange, OverlayChannel}

func newActivationPanel(in *Inspector) *activationPanel {
	p := &activationPanel{in: in, hist: widgets.NewHistogram()}
	p.metric = widget.NewRadioGroup(activationMetrics, func(s string) {
		if s != "" && s != in.Sel.Overlay {
			in.SetOverlay(s)
		}
	})
	p.metric.Horizontal = true
	p.summary = widget.NewLabel("")
	p.summary.TextStyle = fyne.TextStyle{Monospace: true}
	p.channels = widget.NewList(func() int { return len(p.top) },
		func() fyne.CanvasObject { return widget.NewLabel("channel 0000: 0.0000") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			c := p.top[i]
			o.(*widget.Label).SetText(fmt.Sprintf("channel %4d   mean |x| %.4f", c.Channel, c.MeanAbs))
		})
	p.channels.OnSelected = func(i widget.ListItemID) {
		in.Sel.Channel = p.top[i].Channel
		in.SetOverlay(OverlayChannel)
	}
	return p
}

func (p *activationPanel) content() fyne.CanvasObject {
	head := container.NewVBox(widget.NewLabelWithStyle("Per-patch map on the image", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), p.metric)
	hist := container.NewBorder(widget.NewLabelWithStyle("Output values of the block", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), p.summary, nil, nil, p.hist)
	chans := container.NewBorder(widget.NewLabelWithStyle("Top channels (click: map it)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, p.channels)
	split := container.NewVSplit(hist, chans)
	split.SetOffset(0.55)
	return container.NewBorder(head, nil, nil, nil, split)
}

func (p *activationPanel) setChannels(int) { p.drawn = "" }

func (p *activationPanel) refresh() {
	in, s := p.in, p.in.Snap
	if isActivation(in.Sel.Overlay) {
		p.metric.SetSelected(in.Sel.Overlay)
	} else {
		p.metric.SetSelected("")
	}
	b := in.Sel.Block
	key := fmt.Sprintf("%d/%d/%d", s.Gen, b, s.Next)
	if key == p.drawn {
		return
	}
	if b >= s.Next {
		p.summary.SetText(fmt.Sprintf("block %d has not run yet", b))
		return
	}
	p.drawn = key
	if b >= len(s.Outputs) {
		p.summary.SetText(notKept)
		p.hist.SetData(nil, 0, 0, "")
		p.top = nil
		p.channels.Refresh()
		return
	}
	out := s.Outputs[b]
	counts, lo, hi := probe.Histogram(out, 64)
	p.hist.SetData(counts, lo, hi, fmt.Sprintf("block %d output: %d values", b, len(out)))
	mean, std, mn, mx := probe.Summary(out)
	p.summary.SetText(fmt.Sprintf("mean %.4f  std %.4f  min %.4f  max %.4f\nmean change ||out-in||/||in|| %.4f",
		mean, std, mn, mx, meanOf(s.Stats[b].Change)))
	p.top = probe.TopChannelsOf(out, s.Config.Hidden, 12)
	p.channels.UnselectAll()
	p.channels.Refresh()
}

func isActivation(o string) bool {
	for _, m := range activationMetrics {
		if m == o {
			return true
		}
	}
	return false
}
