package ui

// imagepanel.go: the resized page with the selected overlay (the map maps.go makes of the
// selection; the per-patch maps are of the tap selected in Activations), its controls
// (source, channel, colormap, grid, opacity; the scale, follow-the-mouse and rollout options
// of heatmap.go; export) and legend; a click picks the query patch, hover names it — and,
// while following (or with Shift held), makes it the query. Its figure (the view as the
// exports write it) is drawn from what it painted.
//
// Invariant: what the panel shows, its legend and its figure are one map painted with one
// Scale (paint). The mutation that would silently break it: a figure that recomputes the
// scale from the raw values while the view used the clipped or shared one.

import (
	"errors"
	"fmt"
	"image"
	"strconv"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

type imagePanel struct {
	in      *Inspector
	view    *widgets.ImageView
	legend  *widgets.Legend
	source  *widget.Select
	colors  *widget.Select
	opacity *widget.Slider
	grid    *widget.Check
	channel *digitEntry
	caption *widget.Label

	clip      *widget.Select
	logScale  *widget.Check
	exclude   *widget.Check
	shared    *widget.Check
	diverging *widget.Check
	follow    *widget.Check
	fusion    *widget.Select
	discard   *widget.Select
	rollOpts  *fyne.Container // fusion and discard, shown with the rollout overlay
	exportBtn *widget.Button

	sharedMemo sharedMemo

	values []float32 // what the overlay shows now, by sequence index
	cm     widgets.Colormap
	scale  widgets.Scale // what the overlay is painted with (the legend's, an export's)
	unit   string        // the legend's caption

	shiftHeld     bool      // Shift is down (key events: the pointer's carry no modifiers under GLFW)
	followTo      int       // the patch the pointer is over, while following
	followPending bool      // a follow redraw is posted and has not run
	followedAt    time.Time // when the last followed move was drawn
	followEvent   time.Time // the event of the move to followTo
	timeFrom      time.Time // the followed move whose map is not drawn yet (zero: none)
	stale         bool      // the overlay being drawn is the last query's, marked busy

	syncing bool
}

func newImagePanel(in *Inspector) *imagePanel {
	p := &imagePanel{in: in, view: widgets.NewImageView(), legend: widgets.NewLegend()}
	p.view.OnSelect = in.SelectQuery
	p.view.OnHoverMods = p.hovered
	p.view.SetHoverText(p.hoverText)
	p.source = widget.NewSelect(overlayMenu(), func(s string) {
		if !p.syncing {
			in.SetOverlay(s)
		}
	})
	p.colors = widget.NewSelect(widgets.ColormapNames(), func(s string) {
		if p.syncing {
			return
		}
		cm, _ := widgets.ParseColormap(s)
		in.Sel.Colors = cm
		p.changed()
	})
	p.opacity = widget.NewSlider(0, 1)
	p.opacity.Step = 0.05
	p.opacity.OnChanged = func(v float64) {
		if p.syncing {
			return
		}
		in.Sel.Opacity = v
		p.view.SetOpacity(v)
		p.save()
	}
	p.grid = widget.NewCheck("grid", func(on bool) { in.Sel.Grid = on; p.view.SetShowGrid(on) })
	p.channel = newDigitEntry()
	p.channel.SetPlaceHolder("ch")
	p.channel.OnSubmitted = func(s string) {
		if ch, err := strconv.Atoi(s); err == nil {
			in.Sel.Channel = ch
			in.SetOverlay(OverlayChannel)
		}
	}
	p.caption = widget.NewLabel("")
	p.caption.Wrapping = fyne.TextWrapWord
	p.newOptionControls()
	p.exportBtn = widget.NewButtonWithIcon("Export", theme.DocumentSaveIcon(), p.showExportMenu)
	p.syncControls()
	return p
}

// newOptionControls makes the scale, follow and rollout controls (heatmap.go's options).
func (p *imagePanel) newOptionControls() {
	opt := func(set func(*heatmapOptions, bool)) func(bool) {
		return func(on bool) {
			if !p.syncing {
				set(&p.in.maps.opts, on)
				p.changed()
			}
		}
	}
	p.clip = widget.NewSelect(clipChoices, func(s string) {
		if !p.syncing {
			p.in.maps.opts.Clip = clipOf(s)
			p.changed()
		}
	})
	p.logScale = widget.NewCheck("log", opt(func(o *heatmapOptions, on bool) { o.Log = on }))
	p.exclude = widget.NewCheck("skip query", opt(func(o *heatmapOptions, on bool) { o.ExcludeQuery = on }))
	p.shared = widget.NewCheck("shared", opt(func(o *heatmapOptions, on bool) { o.Shared = on }))
	p.diverging = widget.NewCheck("±0", opt(func(o *heatmapOptions, on bool) { o.Diverging = on }))
	p.follow = widget.NewCheck("follow mouse", opt(func(o *heatmapOptions, on bool) { o.Follow = on }))
	var fusions []string
	for _, f := range probe.Fusions() {
		fusions = append(fusions, f.String())
	}
	p.fusion = widget.NewSelect(fusions, func(s string) {
		if !p.syncing {
			p.in.maps.opts.Fusion, _ = probe.ParseFusion(s)
			p.changed()
		}
	})
	p.discard = widget.NewSelect(discardChoices, func(s string) {
		if !p.syncing {
			p.in.maps.opts.Discard, _ = strconv.ParseFloat(s, 64)
			p.changed()
		}
	})
	p.rollOpts = container.NewHBox(widget.NewLabel("rollout heads"), imageTip(p.fusion, "fusion"), widget.NewLabel("discard"), imageTip(p.discard, "discard"))
}

// changed saves the settings and redraws everything that draws a heatmap.
func (p *imagePanel) changed() {
	p.save()
	if p.in.Snap.Loaded() {
		p.in.refresh()
	}
}

func (p *imagePanel) save() { saveHeatmap(p.in.memory.prefs, p.in.Sel, p.in.maps.opts) }

// imageTips are the image panel's tooltips, one per control.
var imageTips = map[string]string{
	"overlay":   "What the heatmap shows: the clicked patch's attention row (one head or the mean), the patches that attend to it, the rollout, the attention matrix, or a per-patch statistic of the block's output",
	"channel":   "A channel of the block's output to map over the image (Enter applies; overlay 'channel')",
	"colours":   "The colormap: viridis, magma, turbo and gray for magnitudes; coolwarm for signed values (with ±0)",
	"grid":      "Draw the patch grid over the image",
	"clip":      "Clip the scale at a percentile of the values, so a few outliers do not wash out the rest",
	"log":       "Log scale: shows the long tail of small attention weights",
	"skip":      "Leave the query patch out of the scale and the top list (a patch mostly attends to itself)",
	"shared":    "One scale for every head and block shown, so maps can be compared by colour",
	"diverging": "Centre the scale on 0 (for signed channels and means): blue below, red above",
	"follow":    "The heatmap follows the hovered patch live (or hold Shift while moving the mouse)",
	"opacity":   "How strongly the heatmap covers the photo (0: the photo only)",
	"export":    "Save this view as a figure (1x or 2x, with colorbar and caption), or a grid of every head of the block, or one head across blocks",
	"fusion":    "How rollout fuses the heads of each block: their mean, max or min",
	"discard":   "Rollout's discard ratio: the fraction of the smallest attention weights dropped from each block before fusing",
}

func imageTip(o fyne.CanvasObject, key string) fyne.CanvasObject { return withTip(o, imageTips[key]) }

func (p *imagePanel) content() fyne.CanvasObject {
	tip := imageTip
	row1 := container.NewHBox(widget.NewLabel("overlay"), tip(p.source, "overlay"), widget.NewLabel("ch"), tip(p.channel, "channel"),
		widget.NewLabel("colours"), tip(p.colors, "colours"), tip(p.grid, "grid"))
	row2 := container.NewHBox(widget.NewLabel("scale"), tip(p.clip, "clip"), tip(p.logScale, "log"), tip(p.exclude, "skip"),
		tip(p.shared, "shared"), tip(p.diverging, "diverging"))
	opacity := container.NewBorder(nil, nil, container.NewHBox(tip(p.follow, "follow"), widget.NewLabel("opacity")),
		tip(p.exportBtn, "export"), tip(p.opacity, "opacity"))
	bottom := container.NewVBox(p.legend, p.caption)
	return container.NewBorder(container.NewVBox(row1, row2, p.rollOpts, opacity), bottom, nil, nil, p.view)
}

// syncControls shows the selection and the options in the controls without firing their
// callbacks, and keeps the overlay in the preferences.
func (p *imagePanel) syncControls() {
	p.syncing = true
	defer func() { p.syncing = false }()
	s, o := p.in.Sel, p.in.maps.opts
	p.source.SetSelected(s.Overlay)
	p.colors.SetSelected(s.Colors.String())
	p.opacity.SetValue(s.Opacity)
	p.grid.SetChecked(s.Grid)
	p.channel.SetText(strconv.Itoa(s.Channel))
	p.clip.SetSelected(clipName(o.Clip))
	p.logScale.SetChecked(o.Log)
	p.exclude.SetChecked(o.ExcludeQuery)
	p.shared.SetChecked(o.Shared)
	p.diverging.SetChecked(o.Diverging)
	p.follow.SetChecked(o.Follow)
	p.fusion.SetSelected(o.Fusion.String())
	p.discard.SetSelected(discardName(o.Discard))
	if s.Overlay == OverlayRollout || s.Overlay == OverlayRolloutWhole {
		p.rollOpts.Show()
	} else {
		p.rollOpts.Hide()
	}
	p.save()
}

func (p *imagePanel) setPage(s *Snapshot) {
	p.view.SetImage(rgbImage(s.Page.Resized), patchGrid(s))
}

// hovered follows the pointer: while following (or while Shift is held) the hovered patch
// becomes the query. A move is drawn in the event, so its map is in the frame that handled
// it (its rows wait up to rowWait; a posted redraw would paint a frame later); the moves
// that come right after it in the same burst fold into one posted redraw at the last patch,
// so the query jumps to where the pointer is instead of replaying every patch it crossed.
func (p *imagePanel) hovered(patch int, mods fyne.KeyModifier) {
	p.followFrom(patch, mods, p.view.MovedAt())
}

// followFrom follows the pointer to patch for the event at (a move, or Shift pressed over
// the image): the map drawn for it is timed from then (the frame-time probe).
func (p *imagePanel) followFrom(patch int, mods fyne.KeyModifier, at time.Time) {
	in := p.in
	follow := in.maps.opts.Follow || mods&fyne.KeyModifierShift != 0 || p.shiftHeld
	if !follow || patch < 0 {
		return
	}
	p.followTo, p.followEvent = patch, at
	if p.followPending {
		return
	}
	if time.Since(p.followedAt) >= followGap { // the first move of a burst: in this frame
		p.followPointer()
		return
	}
	p.followPending = true // the rest of a burst: once, after this frame, at its last patch
	go in.Ctl.Do(func() {
		p.followPending = false
		p.followPointer()
	})
}

// shiftDown follows Shift's key events (GLFW's hover events carry no modifiers): while it
// is held the map follows the pointer, and pressing it over a patch makes that patch the
// query.
func (p *imagePanel) shiftDown(down bool) {
	p.shiftHeld = down
	if q := p.view.Hovered(); down && q >= 0 {
		p.followFrom(q, fyne.KeyModifierShift, time.Now())
	}
}

// onDrag makes a drag over the image hand the rectangle of patches it outlines to f (nil:
// a drag does nothing).
func (p *imagePanel) onDrag(f func(image.Rectangle)) { p.view.OnDragRect = f }

// followGap is how soon after a followed move the next one waits for the frame to end: the
// pointer events of one GL tick come in a burst (tens of µs apart), and only the first is
// drawn at once; the rest are folded into one move to the last patch, after the frame.
const followGap = 4 * time.Millisecond

// followPointer makes the patch the pointer is over the query, timing when the move ended.
func (p *imagePanel) followPointer() {
	if q := p.followTo; q != p.in.Sel.Query {
		p.timeFrom = p.followEvent // the frame-time probe times the map of q from the move
		p.in.SelectQuery(q)
	}
	p.followedAt = time.Now()
}

// refresh recomputes the overlay for the selection.
func (p *imagePanel) refresh() {
	in := p.in
	if !in.Snap.Loaded() {
		return
	}
	vals, caption, stale := in.selectedMap()
	p.stale = stale
	caption += control.InterventionsSuffix(in.Snap.Settings) // an intervention is named in every caption
	p.values = vals
	p.view.SetSelected(in.Sel.Query)
	if vals != nil && !p.stale && !p.timeFrom.IsZero() { // the map the followed move asked for
		p.view.TimeNextOverlay(p.timeFrom)
		p.timeFrom = time.Time{}
	}
	p.paint(vals, caption)
	p.view.SetMarked(p.marks())
	p.view.SetRegion(p.queryWindow())
}

// queryWindow is the patches (columns X, rows Y) of the query's attention window when the
// selected block is windowed and the overlay shows that block's attention; empty otherwise.
// The map is zero outside it: the block never looked there.
func (p *imagePanel) queryWindow() image.Rectangle {
	in, s := p.in, p.in.Snap
	if !s.Loaded() || !s.Layout.Windowed(in.Sel.Block) || (in.Sel.Overlay != OverlayAttention && in.Sel.Overlay != OverlayAttentionTo) {
		return image.Rectangle{}
	}
	return windowRect(s.Layout, in.Sel.Block, in.Sel.Query)
}

// paint colours vals (nil: no overlay) with the scale heatmap.go picks, shows it in the
// legend, and says what it is in the caption; a constant map is named, not painted.
func (p *imagePanel) paint(vals []float32, caption string) {
	in := p.in
	if vals == nil {
		p.cm, p.scale, p.unit = in.Sel.Colors, widgets.Scale{Constant: true, Empty: true}, ""
		p.view.SetOverlay(nil, in.Sel.Colors, 0, 1)
		p.view.SetOpacity(in.Sel.Opacity)
		p.legend.SetScale(in.Sel.Colors, p.scale, legendCaption(in.Sel.Overlay))
		p.caption.SetText(caption)
		return
	}
	att := attentionLike(in.Sel.Overlay)
	maps, shared := [][]float32{vals}, ""
	if in.maps.opts.Shared {
		maps, shared = p.sharedMaps(vals)
	}
	p.cm, p.scale = in.maps.opts.heatmapScale(maps, in.Sel.Colors, att, in.Sel.Query)
	p.unit = legendCaption(in.Sel.Overlay)
	if d := describeScale(p.scale, shared); d != "" {
		p.unit += " · " + d
	}
	if p.scale.Constant {
		p.view.SetOverlay(nil, p.cm, 0, 1)
		caption += fmt.Sprintf(" — a constant map: every patch is %s, nothing to colour", legendNumber(p.scale.Lo))
	} else {
		p.view.SetOverlayScale(in.maps.opts.withoutQuery(vals, att, in.Sel.Query), p.cm, p.scale)
	}
	p.view.SetOpacity(in.Sel.Opacity)
	p.legend.SetScale(p.cm, p.scale, p.unit)
	p.caption.SetText(caption)
	p.showColormapInUse()
}

// showColormapInUse names in the colours menu the map the overlay is painted with: a signed
// map on ±0 goes on coolwarm whatever is chosen for magnitudes.
func (p *imagePanel) showColormapInUse() {
	if name := p.cm.String(); p.colors.Selected != name {
		p.syncing = true
		p.colors.SetSelected(name)
		p.syncing = false
	}
}

func legendNumber(v float32) string { return strconv.FormatFloat(float64(v), 'g', 4, 32) }

// marks are the top-5 patches of attention overlays (the query left out when it is left out
// of the scale).
func (p *imagePanel) marks() []int {
	o := p.in.Sel.Overlay
	if p.values == nil || !attentionLike(o) || p.scale.Constant {
		return nil
	}
	return topK(p.in.maps.opts.withoutQuery(p.values, true, p.in.Sel.Query), 5)
}

func (p *imagePanel) hoverText(patch int) string {
	s := p.in.Snap
	if !s.Loaded() || patch < 0 || patch >= s.Layout.Rows() {
		return ""
	}
	pos := s.Layout.Pos[patch]
	return widgets.PatchReadout(pos.Row, pos.Col, patch, p.values)
}

// figure is the view as a figure at zoom (1 or 2) times the page's resolution: the photo with
// the overlay, grid, marks and selection as drawn, the colour bar of the scale used, and the
// caption.
func (p *imagePanel) figure(zoom int) (widgets.Figure, error) {
	in, s := p.in, p.in.Snap
	if !s.Loaded() {
		return widgets.Figure{}, errors.New("nothing to export yet")
	}
	zoom = max(zoom, 1)
	photo := pagePhoto(s, s.Page.Resized.W*zoom, s.Page.Resized.H*zoom)
	var vals []float32
	if p.values != nil && !p.scale.Constant {
		vals = in.maps.opts.withoutQuery(p.values, attentionLike(in.Sel.Overlay), in.Sel.Query)
	}
	grid := patchGrid(s)
	panel := widgets.ComposeHeatmap(photo, grid, vals, p.cm, p.scale, in.Sel.Opacity)
	widgets.DecorateHeatmap(panel, grid, in.Sel.Grid, p.marks(), in.Sel.Query)
	return widgets.Figure{Panels: []image.Image{panel}, Colormap: p.cm, Scale: p.scale, ScaleCaption: p.unit,
		Caption: in.figureCaption(p.caption.Text, p.cm), Zoom: float64(zoom), NoScale: p.values == nil}, nil
}

// mapImage is the view's map alone, each patch a px x px block of its colour (nil: no map).
func (p *imagePanel) mapImage(px int) image.Image {
	if m := p.view.MapImage(px); m != nil {
		return m
	}
	return nil
}

// digitEntry is an Entry wide enough for five digits: channels of D up to 1152 and of the
// MLP's I up to 4304 show whole (a plain Entry in a row shrinks to one character).
type digitEntry struct{ widget.Entry }

func newDigitEntry() *digitEntry {
	e := &digitEntry{}
	e.ExtendBaseWidget(e)
	return e
}

// MinSize is the Entry's, widened to five digits.
func (e *digitEntry) MinSize() fyne.Size {
	m := e.Entry.MinSize()
	th := e.Theme()
	w := fyne.MeasureText("00000", th.Size(theme.SizeNameText), e.TextStyle).Width +
		2*th.Size(theme.SizeNameInnerPadding) + 2*th.Size(theme.SizeNameInputBorder)
	return fyne.NewSize(max(m.Width, w), m.Height)
}
