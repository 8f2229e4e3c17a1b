package ui

// heatmap.go: how a per-patch map becomes colours in the image panel, the head grid, the
// matrix view and the exports — the scale options (a percentile clip, log10, the query patch
// left out of the scale and of the top-k list, one scale shared by every block and head,
// signed maps on a diverging colormap centred at 0), following the mouse, the rollout's
// head fusion and discard ratio — and keeping all of them, with the colormap, the opacity
// and the overlay, in the preferences so they survive a relaunch.
//
// Invariant: what is painted and what the legend (or an export's colour bar) says are one
// Scale, chosen once per view by heatmapScale from the same maps and options. The mutation
// that would silently break it: the legend computing its own range from the raw values while
// the overlay uses the clipped or shared one — the colours then mean other numbers than the
// ticks under them.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"

	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

// OverlayAttentionTo colours every patch by how much it attends TO the query patch: column
// query of the attention matrix (the selected head, or the mean of heads), over the query's
// segment.
const OverlayAttentionTo = "attention to"

// overlayMenu is the overlay sources the image panel offers: Overlays.
func overlayMenu() []string { return slices.Clone(Overlays) }

// attentionLike overlays are attention probabilities of (or to) the query patch: their scale
// starts at 0 and the query may be left out of it.
func attentionLike(o string) bool {
	return o == OverlayAttention || o == OverlayRollout || o == OverlayRolloutWhole || o == OverlayAttentionTo
}

// heatmapOptions are the image panel's scale, follow and rollout settings.
type heatmapOptions struct {
	Clip         float64 // percentile the scale stops at (99, 99.9); 0: the full range
	Log          bool    // log10 scale
	ExcludeQuery bool    // attention maps: the query patch out of the scale and the top-k list
	Shared       bool    // one scale over every block and head (of this query)
	Diverging    bool    // signed maps on coolwarm, centred at 0
	Follow       bool    // the query follows the pointer (Shift does it while held)
	Fusion       probe.Fusion
	Discard      float64
}

// defaultHeatmap: the query left out (it would top its own map) and signed maps diverging.
var defaultHeatmap = heatmapOptions{ExcludeQuery: true, Diverging: true}

// The choices the controls offer.
var (
	clipChoices    = []string{"full range", "99.9th pct", "99th pct"}
	clipValues     = []float64{0, 99.9, 99}
	discardChoices = []string{"0", "0.5", "0.8", "0.9", "0.95", "0.99"}
)

func clipName(c float64) string {
	for i, v := range clipValues {
		if v == c {
			return clipChoices[i]
		}
	}
	return clipChoices[0]
}

func clipOf(name string) float64 {
	if i := slices.Index(clipChoices, name); i >= 0 {
		return clipValues[i]
	}
	return 0
}

func discardName(d float64) string { return strconv.FormatFloat(d, 'g', -1, 64) }

// rollout is the rollout's head fusion and discard ratio.
func (o heatmapOptions) rollout() probe.RolloutOptions {
	return probe.RolloutOptions{Fusion: o.Fusion, Discard: o.Discard}
}

// Preference keys of the heatmap settings, and the folder the exports go to.
const (
	prefColormap     = "heatmap.colormap"
	prefOpacity      = "heatmap.opacity"
	prefOverlay      = "heatmap.overlay"
	prefClip         = "heatmap.clip"
	prefLog          = "heatmap.log"
	prefExclude      = "heatmap.exclude_query"
	prefShared       = "heatmap.shared"
	prefDiverging    = "heatmap.diverging"
	prefFollow       = "heatmap.follow"
	prefFusion       = "heatmap.fusion"
	prefDiscard      = "heatmap.discard"
	prefExportFolder = "folder.exports"
)

// loadHeatmap reads the saved settings into sel and returns the options; what is missing or
// no longer valid keeps its default. Nil prefs: the defaults.
func loadHeatmap(prefs fyne.Preferences, sel *Selection) heatmapOptions {
	o := defaultHeatmap
	if prefs == nil {
		return o
	}
	if cm, ok := widgets.ParseColormap(prefs.String(prefColormap)); ok {
		sel.Colors = cm
	}
	if v := prefs.FloatWithFallback(prefOpacity, sel.Opacity); v >= 0 && v <= 1 {
		sel.Opacity = v
	}
	if v := prefs.String(prefOverlay); slices.Contains(overlayMenu(), v) {
		sel.Overlay = v
	}
	if v := prefs.Float(prefClip); slices.Contains(clipValues, v) {
		o.Clip = v
	}
	o.Log = prefs.BoolWithFallback(prefLog, o.Log)
	o.ExcludeQuery = prefs.BoolWithFallback(prefExclude, o.ExcludeQuery)
	o.Shared = prefs.BoolWithFallback(prefShared, o.Shared)
	o.Diverging = prefs.BoolWithFallback(prefDiverging, o.Diverging)
	o.Follow = prefs.BoolWithFallback(prefFollow, o.Follow)
	if f, ok := probe.ParseFusion(prefs.String(prefFusion)); ok {
		o.Fusion = f
	}
	if v := prefs.Float(prefDiscard); slices.Contains(discardChoices, discardName(v)) {
		o.Discard = v
	}
	return o
}

// saveHeatmap keeps sel's colormap, opacity and overlay and the options.
func saveHeatmap(prefs fyne.Preferences, sel Selection, o heatmapOptions) {
	if prefs == nil {
		return
	}
	prefs.SetString(prefColormap, sel.Colors.String())
	prefs.SetFloat(prefOpacity, sel.Opacity)
	prefs.SetString(prefOverlay, sel.Overlay)
	prefs.SetFloat(prefClip, o.Clip)
	prefs.SetBool(prefLog, o.Log)
	prefs.SetBool(prefExclude, o.ExcludeQuery)
	prefs.SetBool(prefShared, o.Shared)
	prefs.SetBool(prefDiverging, o.Diverging)
	prefs.SetBool(prefFollow, o.Follow)
	prefs.SetString(prefFusion, o.Fusion.String())
	prefs.SetFloat(prefDiscard, o.Discard)
}

// heatmapScale is the colormap and the scale for maps (one shared scale over all of them)
// under o: attention maps start at 0 and may leave the query out; a signed map (values on
// both sides of 0) goes on coolwarm centred at 0 when o.Diverging, and a diverging colormap
// is always centred at 0.
func (o heatmapOptions) heatmapScale(maps [][]float32, base widgets.Colormap, attention bool, query int) (widgets.Colormap, widgets.Scale) {
	var exclude []int
	if attention && o.ExcludeQuery && query >= 0 {
		exclude = []int{query}
	}
	div := base.Diverging() || (o.Diverging && signed(maps, exclude))
	cm := base
	if div && !base.Diverging() {
		cm = widgets.CoolWarm
	}
	return cm, widgets.ComputeScale(maps, widgets.ScaleOptions{Clip: o.Clip, Log: o.Log && !div, Diverging: div, FromZero: attention, Exclude: exclude})
}

// signed: some finite value of maps (outside exclude) is below 0 and some above.
func signed(maps [][]float32, exclude []int) bool {
	neg, pos := false, false
	for _, m := range maps {
		for i, v := range m {
			if slices.Contains(exclude, i) || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				continue
			}
			neg, pos = neg || v < 0, pos || v > 0
		}
	}
	return neg && pos
}

// describeScale is what the legend says besides the unit: how the scale was chosen.
func describeScale(sc widgets.Scale, shared string) string {
	var parts []string
	switch {
	case sc.Empty:
		return "no values"
	case sc.Constant:
		return "constant map"
	}
	if sc.Log {
		parts = append(parts, "log10")
	}
	if sc.Diverging {
		parts = append(parts, "centred at 0")
	}
	if sc.Clip > 0 {
		parts = append(parts, fmt.Sprintf("clipped at the %gth percentile", sc.Clip))
	}
	if sc.Excluded > 0 {
		parts = append(parts, "query patch excluded")
	}
	if shared != "" {
		parts = append(parts, shared)
	}
	return strings.Join(parts, ", ")
}

// withoutQuery is vals with the query patch made NaN (uncoloured, last in TopK) when the
// query is left out of attention maps; vals itself otherwise.
func (o heatmapOptions) withoutQuery(vals []float32, attention bool, query int) []float32 {
	if !attention || !o.ExcludeQuery || query < 0 || query >= len(vals) {
		return vals
	}
	out := slices.Clone(vals)
	out[query] = float32(math.NaN())
	return out
}

// sharedMaps are the maps one shared scale spans for the overlay shown (vals) and the query:
// every head of every block run for attention, every block run for the per-patch statistics
// and channels. Rollout and attention-to keep their own scale (a rollout to every block, or
// every head's column, would cost a full pass each): the note says so.
func (p *imagePanel) sharedMaps(vals []float32) ([][]float32, string) {
	in, s := p.in, p.in.Snap
	key := fmt.Sprintf("%p/%d/%s/%s/%d/%d/%d", s.Probes, s.Next, in.Sel.Overlay, in.Sel.Tap, in.Sel.Channel, in.Sel.Head, in.Sel.Query)
	if key != p.sharedMemo.key {
		maps, note, done := p.gatherShared(vals)
		if !done { // the other blocks' rows are computed off the UI goroutine: own scale meanwhile
			return maps, note
		}
		p.sharedMemo.maps, p.sharedMemo.note, p.sharedMemo.key = maps, note, key
	}
	return p.sharedMemo.maps, p.sharedMemo.note
}

// sharedMemo is the last sharedMaps: a shared scale over the per-patch statistics of a kept
// tap costs a pass over every block's values.
type sharedMemo struct {
	key  string
	maps [][]float32
	note string
}

// gatherShared computes sharedMaps; done is false while rows it needs are computed.
func (p *imagePanel) gatherShared(vals []float32) (maps [][]float32, note string, done bool) {
	in, s := p.in, p.in.Snap
	switch in.Sel.Overlay {
	case OverlayRollout, OverlayRolloutWhole, OverlayAttentionTo:
		return [][]float32{vals}, "own scale (a shared one is not computed for " + in.Sel.Overlay + ")", true
	case OverlayAttention:
		maps, err := in.maps.rows.HeadsOf(s.Probes, s.Next, in.Sel.Query)
		if err == control.ErrComputing {
			return [][]float32{vals}, "own scale while the other blocks' rows are computed", false
		}
		if err != nil {
			return [][]float32{vals}, "own scale: " + err.Error(), true
		}
		return maps, fmt.Sprintf("shared by %d blocks × %d heads", s.Next, s.Config.Heads), true
	}
	for b := range s.Next {
		m, err := in.mapOfBlock(b)
		if err != nil {
			return [][]float32{vals}, "own scale: " + err.Error(), true
		}
		maps = append(maps, m)
	}
	return maps, fmt.Sprintf("shared by %d blocks", s.Next), true
}
