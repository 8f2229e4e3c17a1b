package ui

// activations.go: the activations tab — which tap of the block to look at (out by default,
// or any tap the run kept: engine/tower/tap.go), which per-patch map the image shows (L2 norm,
// mean, max |x|, change ||out-in||/||in|| for out only, one channel), a histogram of the
// tap's values, their mean/std/min/max, and the channels with the largest mean |x|.
//
// Invariant: the histogram and summary are of the selected tap of the selected block, all
// S*W values; the mutation that would silently break it: summarising the per-patch map (or
// the block output whatever the tap) instead.

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/widgets"
)

type activationPanel struct {
	in       *Inspector
	tap      *widget.Select
	syncing  bool // showing the selection in tap, not a user's choice
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
	p.tap = widget.NewSelect([]string{tapOut}, func(s string) {
		if !p.syncing && s != "" && s != in.Sel.Tap {
			in.SelectTap(s)
		}
	})
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
	tap := container.NewBorder(nil, nil, widget.NewLabelWithStyle("Tap", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, p.tap)
	head := container.NewVBox(tap, widget.NewLabelWithStyle("Per-patch map on the image", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), p.metric)
	logY := widget.NewCheck("log counts", func(on bool) { p.hist.SetLogY(on) })
	title := container.NewBorder(nil, nil, widget.NewLabelWithStyle("Values of the tap", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), withTip(logY,
		"Bar heights on log(1 + count): the few large activations (the reason to look) beside the bulk"))
	hist := container.NewBorder(title, p.summary, nil, nil, p.hist)
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
	p.syncTap(s)
	b, tap := in.Sel.Block, in.Sel.Tap
	key := fmt.Sprintf("%d/%d/%d/%s", s.Gen, b, s.Next, tap)
	if key == p.drawn {
		return
	}
	p.drawn = key
	if b >= s.Next { // a restarted run: nothing of the block is shown until it runs again
		p.clear(fmt.Sprintf("block %d has not run yet", b))
		return
	}
	x, w, err := tapValues(s, tap, b)
	if err != nil {
		p.clear(err.Error())
		return
	}
	counts, lo, hi := probe.Histogram(x, 64)
	p.hist.SetData(counts, lo, hi, fmt.Sprintf("block %d %s: %d values", b, tap, len(x)))
	mean, std, mn, mx := probe.Summary(x)
	p.summary.SetText(fmt.Sprintf("%s: %s\nmean %.4f  std %.4f  min %.4f  max %.4f\n%s",
		tap, tapAbout(tap), mean, std, mn, mx, changeLine(s, tap, b)))
	p.top = probe.TopChannelsOf(x, w, 12)
	p.channels.UnselectAll()
	p.channels.Refresh()
}

// clear empties the histogram and the channel list and says why.
func (p *activationPanel) clear(why string) {
	p.summary.SetText(why)
	p.hist.SetData(nil, 0, 0, "")
	p.top = nil
	p.channels.UnselectAll()
	p.channels.Refresh()
}

// syncTap offers the run's taps and shows the selected one, without firing the callback.
func (p *activationPanel) syncTap(s *Snapshot) {
	p.syncing = true
	defer func() { p.syncing = false }()
	p.tap.SetOptions(tapOptions(s))
	p.tap.SetSelected(p.in.Sel.Tap)
}

// changeLine is the block's mean change for out; the other taps have none.
func changeLine(s *Snapshot, tap string, b int) string {
	if tap != tapOut {
		return "change ||out-in||/||in|| is the block output's: select the tap out"
	}
	return fmt.Sprintf("mean change ||out-in||/||in|| %.4f", s.Stats[b].MeanChange)
}

// tapAbout is what the tap named name is.
func tapAbout(name string) string {
	t, err := engine.ParseTap(name)
	if err != nil {
		return ""
	}
	return t.About()
}

func isActivation(o string) bool {
	for _, m := range activationMetrics {
		if m == o {
			return true
		}
	}
	return false
}
