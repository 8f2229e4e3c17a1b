package ui

// maps.go: how the selection becomes a map on the page — the attention row of the query
// (one head or the mean), the attention to it, its rollout, a per-patch statistic or one
// channel of the selected tap — and the caption that says what it is. The image panel paints
// it, the attention tab ranks it, the What if tab fills its masks from it, the exports draw
// it: each asks here (Inspector.selectedMap), and every attention row or map comes from the
// one row service (control.Rows), never from another panel.
//
// Invariant: the map is always indexed by sequence (merge-window) index, the index the
// engine uses, and is of the selected block, head, tap and query of the current snapshot.
// The mutation that would silently break it: indexing values by the raster position of the
// hovered patch, or keeping a map across a change of the selection's block.

import (
	"fmt"

	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/control"
)

// OverlayRolloutWhole colours every patch by the whole image's rollout: the mean over the
// queries of its image of their rollout rows.
const OverlayRolloutWhole = "rollout, whole image"

// viewMaps is what makes the window's maps: the row service, the scale and rollout options
// (heatmap.go), and the two memos a redraw asks again.
type viewMaps struct {
	rows  *control.Rows
	opts  heatmapOptions
	stats tapStats // per-patch statistics of the tap shown (taps.go)
	last  lastMap  // the last attention map made: shown, marked, while the next one is computed
}

// lastMap is the last attention map made, of one run's Store.
type lastMap struct {
	store   *probe.Store
	vals    []float32
	caption string
}

// selectedMap is the map the selection asks for (nil: none, or not here yet), what it is,
// and stale: it is the last query's attention map, shown marked while the new one is
// computed.
func (in *Inspector) selectedMap() (vals []float32, caption string, stale bool) {
	s := in.Snap
	b := in.Sel.Block
	if b >= s.Next {
		return nil, fmt.Sprintf("block %d has not run yet", b), false
	}
	switch in.Sel.Overlay {
	case OverlayAttention:
		return in.attentionMap()
	case OverlayRollout:
		vals, caption = in.rolloutMap(false)
	case OverlayRolloutWhole:
		vals, caption = in.rolloutMap(true)
	case OverlayAttentionTo:
		vals, caption = in.attentionToMap()
	case OverlayNone:
	case OverlayChannel:
		vals, caption = in.channelMap(b)
	default:
		vals, caption = in.statsMap(b)
	}
	return vals, caption, false
}

// attentionMap is the query's attention row of the selected block and head; while the rows
// are computed, the last attention map drawn, marked stale.
func (in *Inspector) attentionMap() ([]float32, string, bool) {
	caption := fmt.Sprintf("block %d, %s: attention of the query patch (outlined) over the image", in.Sel.Block, headName(in.Sel.Head))
	if in.Snap.Layout.Windowed(in.Sel.Block) {
		caption = fmt.Sprintf("block %d, %s: attention of the query patch (outlined) within its window (amber; zero outside: this block attends within windows)", in.Sel.Block, headName(in.Sel.Head))
	}
	m := &in.maps
	e, err := m.rows.Of(in.Snap.Probes, in.Sel.Block, in.Sel.Query)
	if err == control.ErrComputing { // the last map drawn stays, marked, until the new one lands
		if m.last.store == in.Snap.Probes && m.last.vals != nil {
			return m.last.vals, m.last.caption + " · computing the new map…", true
		}
		return nil, caption + " · computing…", false
	}
	if err != nil {
		return nil, err.Error(), false
	}
	row, err := e.Pick(in.Sel.Head)
	if err != nil {
		return nil, err.Error(), false
	}
	m.last = lastMap{in.Snap.Probes, row, caption}
	return row, caption, false
}

// attentionToMap is how much every patch attends to the query: the service's column, or a
// busy mark while it is computed.
func (in *Inspector) attentionToMap() ([]float32, string) {
	caption := fmt.Sprintf("block %d, %s: how much every patch attends TO the query patch (outlined): column %d of the attention matrix",
		in.Sel.Block, headName(in.Sel.Head), in.Sel.Query)
	vals, err := in.maps.rows.AttentionTo(in.Snap.Probes, in.Sel.Block, in.Sel.Head, in.Sel.Query)
	switch {
	case err != nil:
		return nil, "attention to: " + err.Error()
	case vals == nil:
		return nil, caption + " (computing…)"
	}
	return vals, caption
}

// rolloutMap is the rollout of the query (whole: of the whole image) from block 0 to the
// selected block, as the service has it: the map, or how far its table is.
func (in *Inspector) rolloutMap(whole bool) ([]float32, string) {
	s := in.Snap
	o := in.maps.opts.rollout()
	b, q := in.Sel.Block, in.Sel.Query
	caption := fmt.Sprintf("attention rollout (heads fused by %s, discard %s) from block 0 to block %d for the query patch",
		o.Fusion, discardName(o.Discard), b)
	if whole {
		caption = fmt.Sprintf("whole-image attention rollout (heads fused by %s, discard %s) from block 0 to block %d: the mean over its patches' rollouts",
			o.Fusion, discardName(o.Discard), b)
	}
	m := in.maps.rows.Rollout(s.Probes, o, s.Next-1, b, q, whole)
	switch {
	case m.Err != nil:
		return nil, "rollout: " + m.Err.Error()
	case m.Building:
		return nil, caption + fmt.Sprintf(" — building the rollout table: %d of %d blocks folded in (block %d %.0f%%)…", m.Folded, b+1, m.Folded, 100*m.Frac)
	case m.Computing:
		return nil, caption + " (computing…)"
	}
	return m.Row, caption
}

// statsMap is the per-patch statistic the overlay names, of the selected tap of block b.
func (in *Inspector) statsMap(b int) ([]float32, string) {
	s := in.Snap
	if in.Sel.Overlay == OverlayChange && in.Sel.Tap != tapOut {
		return nil, fmt.Sprintf("change ||out−in||/||in|| is defined for the block output: select the tap out (now %s)", in.Sel.Tap)
	}
	st, err := in.maps.stats.of(s, in.Sel.Tap, b)
	if err != nil {
		return nil, err.Error()
	}
	m := map[string][]float32{OverlayNorm: st.Norm, OverlayMean: st.Mean, OverlayMaxAbs: st.MaxAbs, OverlayChange: st.Change}
	return m[in.Sel.Overlay], fmt.Sprintf("block %d %s: %s per patch", b, tapCaption(in.Sel.Tap), in.Sel.Overlay)
}

// channelMap is one channel of the selected tap of block b, per patch.
func (in *Inspector) channelMap(b int) ([]float32, string) {
	s := in.Snap
	ch, tap := in.Sel.Channel, in.Sel.Tap
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

// mapOfBlock is the overlay's map for block b (the selected head, tap, channel and query),
// waiting for what is not here (a shared scale over blocks, a contact sheet): the attention
// row for the attention overlays (rollout and attention-to included: what a sheet across
// blocks shows of them).
func (in *Inspector) mapOfBlock(b int) ([]float32, error) {
	s := in.Snap
	switch in.Sel.Overlay {
	case OverlayAttention, OverlayRollout, OverlayRolloutWhole, OverlayAttentionTo, OverlayNone:
		return in.maps.rows.WaitRow(s.Probes, b, in.Sel.Head, in.Sel.Query)
	case OverlayChannel:
		return s.Probes.TapChannelMap(in.Sel.Tap, b, in.Sel.Channel)
	}
	if in.Sel.Tap == tapOut {
		st := s.Stats[b]
		m := map[string][]float32{OverlayNorm: st.Norm, OverlayMean: st.Mean, OverlayMaxAbs: st.MaxAbs, OverlayChange: st.Change}
		return m[in.Sel.Overlay], nil
	}
	x, w, err := tapValues(s, in.Sel.Tap, b)
	if err != nil {
		return nil, err
	}
	st := probe.RowStats(x, w)
	m := map[string][]float32{OverlayNorm: st.Norm, OverlayMean: st.Mean, OverlayMaxAbs: st.MaxAbs}
	return m[in.Sel.Overlay], nil
}

// tapCaption names a tap in captions: "output" for out.
func tapCaption(tap string) string {
	if tap == tapOut {
		return "output"
	}
	return "tap " + tap
}

func headName(h int) string {
	if h < 0 {
		return "mean of heads"
	}
	return fmt.Sprintf("head %d", h)
}

// legendCaption names the legend's unit.
func legendCaption(overlay string) string {
	switch overlay {
	case OverlayAttention, OverlayAttentionTo:
		return "attention probability"
	case OverlayRollout:
		return "attention rollout (flow from the query through the blocks)"
	case OverlayRolloutWhole:
		return "whole-image attention rollout (mean of its patches' rollouts)"
	case OverlayChange:
		return "||out − in|| / ||in||"
	}
	return overlay
}
