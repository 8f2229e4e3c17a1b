package ui

// strip.go: the row of blocks above the image — one cell per block, coloured by its wall time
// or by how much it changed the activations (mean ||out−in||/||in||), the windowed blocks
// barred, the selected block outlined, the next to run marked; a click selects a block, a
// hover says its times.
//
// Invariant: cell i is block i of the current snapshot, and a block not run yet has no
// colour (NaN). Mutation that would silently break it: colouring the cells of the blocks
// still to run with the last run's values after a Restart.

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/ui/widgets"
)

// blockStrip is the strip and its "colour by" choice.
type blockStrip struct {
	in   *Inspector
	view *widgets.BlockStrip
	by   *widget.RadioGroup // "time" or "change"
}

func newBlockStrip(in *Inspector) *blockStrip {
	b := &blockStrip{in: in}
	b.view = widgets.NewBlockStrip(in.SelectBlock)
	b.view.SetTooltip(b.tooltip)
	b.by = widget.NewRadioGroup([]string{"time", "change"}, func(string) { b.refresh() })
	b.by.Horizontal = true
	b.by.SetSelected("change")
	return b
}

func (b *blockStrip) content() fyne.CanvasObject {
	colourBy := withTip(b.by, "Colour each block by its wall time, or by how much it changed the activations (mean ||out−in||/||in||)")
	return container.NewBorder(nil, nil, widget.NewLabelWithStyle("Blocks", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewHBox(widget.NewLabel("colour by"), colourBy), b.view)
}

// refresh colours the blocks run, bars the windowed ones, outlines the selected block and
// marks the next to run.
func (b *blockStrip) refresh() {
	s := b.in.Snap
	if !s.Loaded() {
		return
	}
	vals := make([]float64, s.Config.Depth)
	for i := range vals {
		vals[i] = nan()
		if i < len(s.Timings) {
			vals[i] = b.value(i)
		}
	}
	b.view.SetValues(vals, widgets.Magma)
	marked := make([]bool, s.Config.Depth)
	for i := range marked {
		marked[i] = s.Layout.Windowed(i)
	}
	b.view.SetMarked(marked)
	b.view.SetSelected(b.in.Sel.Block)
	if s.Next < s.Config.Depth {
		b.view.SetCurrent(s.Next)
	} else {
		b.view.SetCurrent(-1)
	}
}

// value is block i's colour value: its wall time (ms) or its mean change.
func (b *blockStrip) value(i int) float64 {
	if b.by.Selected == "time" {
		return b.in.Snap.Timings[i].Wall.Seconds() * 1000
	}
	return b.in.Snap.Stats[i].MeanChange
}

// tooltip says block i's times and change, and where it attends.
func (b *blockStrip) tooltip(i int) string {
	s := b.in.Snap
	attends := ""
	if s.Loaded() && s.Layout.Windowed(i) {
		attends = " · attends within windows (the bar)"
	} else if s.Loaded() && s.Layout.AnyWindowed() {
		attends = " · attends over the whole image"
	}
	if !s.Loaded() || i >= len(s.Timings) {
		return fmt.Sprintf("block %d: not run yet%s", i, attends)
	}
	t := s.Timings[i]
	return fmt.Sprintf("block %d: %.1f ms (attention %.1f, MLP %.1f, wait %.1f), change %.3f%s", i,
		ms(t.Wall), ms(t.Attention), ms(t.MLP), ms(t.Wait), s.Stats[i].MeanChange, attends)
}
