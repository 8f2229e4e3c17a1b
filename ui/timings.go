package ui

// timings.go: per-block bars (weight wait / attention half / MLP half / deepstack / host,
// then the window's time after the block), totals, the slowest block, and the answers to
// "where does the time go" and "does streaming stall".
//
// Invariant: a bar's engine parts are the BlockTiming fields in that order and add up to
// the block's wall; the window's part comes on top, never inside it. The mutation that
// would silently break it: putting Wall in a part (it already contains the others), or
// folding the window's time into "host" — the block would look slower than it ran.

import (
	"fmt"
	"image/color"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/widgets"
)

// Bar parts and their colours, shared with the compare tab. The parts add up to the
// block's wall time: what is neither a weight wait nor a GPU/CPU pass (downloading the kept
// taps, the finite-value check, the block's statistics) is "host", so a bar's height is the
// same number the summary and the exports give for the block.
var (
	timingParts  = []string{"weight wait", "attention", "MLP", "deepstack", "host"}
	timingColors = []color.Color{
		color.NRGBA{R: 0xe4, G: 0x57, B: 0x56, A: 0xff}, // wait: red, it is the stall
		color.NRGBA{R: 0x4c, G: 0x8b, B: 0xf5, A: 0xff}, // attention half
		color.NRGBA{R: 0x45, G: 0xb8, B: 0x8d, A: 0xff}, // MLP half
		color.NRGBA{R: 0xb0, G: 0x7c, B: 0xe8, A: 0xff}, // deepstack merger
		color.NRGBA{R: 0x9a, G: 0x9a, B: 0x9a, A: 0xff}, // host work between the passes
	}
)

// The Timings tab's bars add the window's part: the time Run all lent the window's
// drawing and probes after the block (Snapshot.WindowTime), outside the block's wall.
var (
	runParts  = append(append([]string(nil), timingParts...), "window")
	runColors = append(append([]color.Color(nil), timingColors...), color.NRGBA{R: 0xf2, G: 0xb1, B: 0x3c, A: 0xff}) // amber: not the engine's
)

// barParts splits a block's wall time (ms) into timingParts.
func barParts(wait, attention, mlp, deepstack, wall float64) []float64 {
	return []float64{wait, attention, mlp, deepstack, max(0, wall-wait-attention-mlp-deepstack)}
}

func timingRows(ts []engine.BlockTiming) [][]float64 {
	rows := make([][]float64, len(ts))
	for i, t := range ts {
		rows[i] = barParts(ms(t.Wait), ms(t.Attention), ms(t.MLP), ms(t.Deepstack), ms(t.Wall))
	}
	return rows
}

// runRows are timingRows with the window's time after each block (runParts).
func runRows(ts []engine.BlockTiming, window []time.Duration) [][]float64 {
	rows := timingRows(ts)
	for i := range rows {
		var w time.Duration
		if i < len(window) {
			w = window[i]
		}
		rows[i] = append(rows[i], ms(w))
	}
	return rows
}

type timingsPanel struct {
	in      *Inspector
	bars    *widgets.Bars
	summary *widget.Label
	ops     *widget.Label
}

func newTimingsPanel(in *Inspector) *timingsPanel {
	p := &timingsPanel{in: in}
	p.bars = widgets.NewBars(runParts, runColors, "ms", in.SelectBlock)
	p.summary = widget.NewLabel("")
	p.summary.Wrapping = fyne.TextWrapWord
	p.ops = widget.NewLabel("")
	p.ops.TextStyle = fyne.TextStyle{Monospace: true}
	p.ops.Wrapping = fyne.TextWrapWord
	return p
}

func (p *timingsPanel) content() fyne.CanvasObject {
	return container.NewBorder(nil, container.NewVBox(p.summary, p.ops), nil, nil, p.bars)
}

func (p *timingsPanel) refresh() {
	s := p.in.Snap
	p.bars.SetSeries(widgets.Series{Name: s.Settings.Describe(), Rows: runRows(s.Timings, s.WindowTime)})
	p.bars.SetSelected(p.in.Sel.Block)
	p.summary.SetText(timingSummary(s, slowestBlock(s.Timings)))
	p.ops.SetText(opBreakdown(s, p.in.Sel.Block))
}

// timingSummary answers where the time goes and whether streaming stalls.
func timingSummary(s *Snapshot, slowest int) string {
	if len(s.Timings) == 0 {
		return "no block has run yet"
	}
	var wait, attn, mlp, deep, wall float64
	var read int64
	for _, t := range s.Timings {
		wait, attn, mlp, wall = wait+ms(t.Wait), attn+ms(t.Attention), mlp+ms(t.MLP), wall+ms(t.Wall)
		deep += ms(t.Deepstack)
		read += t.BytesRead
	}
	pct := func(x float64) float64 { return 100 * x / max(wall, 1e-9) }
	var b strings.Builder
	fmt.Fprintf(&b, "%d blocks in %.1f ms: attention %.0f%%, MLP %.0f%%", len(s.Timings), wall, pct(attn), pct(mlp))
	if deep > 0 {
		fmt.Fprintf(&b, ", deepstack %.0f%%", pct(deep))
	}
	fmt.Fprintf(&b, ", host %.0f%% (taps, checks), waiting for weights %.1f%% (%.1f ms).",
		pct(max(0, wall-wait-attn-mlp-deep)), pct(wait), wait)
	var window float64
	for _, d := range s.WindowTime {
		window += ms(d)
	}
	if window > 0 {
		fmt.Fprintf(&b, " The window took %.1f ms between blocks (%.0f%% of the blocks' time: its drawing and probes, not in the blocks' times).",
			window, pct(window))
	}
	if slowest >= 0 {
		fmt.Fprintf(&b, " Slowest: block %d (%.1f ms).", slowest, ms(s.Timings[slowest].Wall))
	}
	if s.Settings.Residency == engine.Pread {
		fmt.Fprintf(&b, " pread: %s read", engine.FormatBytes(read))
		if stall := stalledBlocks(s.Timings); len(stall) > 0 {
			fmt.Fprintf(&b, "; streaming stalls on blocks %v (wait > 5%% of the block).", stall)
		} else {
			b.WriteString("; streaming keeps up (no block waits more than 5% of its time).")
		}
	} else {
		fmt.Fprintf(&b, " mapped: %s of weights in the page cache, no copies.", engine.FormatBytes(s.WeightBytes))
	}
	return b.String()
}

// slowestBlock is the block of the longest wall time (the window's time after it is not the
// block's); -1 when none ran.
func slowestBlock(ts []engine.BlockTiming) int {
	best := -1
	for i, t := range ts {
		if best < 0 || t.Wall > ts[best].Wall {
			best = i
		}
	}
	return best
}

// stalledBlocks are the blocks that waited for weights more than 5% of their wall time
// (block 0 always waits for its first read, so it is left out).
func stalledBlocks(ts []engine.BlockTiming) []int {
	var out []int
	for _, t := range ts[1:] {
		if t.Wait*20 > t.Wall {
			out = append(out, t.Block)
		}
	}
	return out
}

// opBreakdown lists the selected block's time per op kind (CPU backend only).
func opBreakdown(s *Snapshot, block int) string {
	if block >= len(s.Timings) || s.Timings[block].Ops == nil {
		return ""
	}
	ops := s.Timings[block].Ops
	names := make([]string, 0, len(ops))
	for k := range ops {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return ops[names[i]] > ops[names[j]] })
	var b strings.Builder
	fmt.Fprintf(&b, "block %d by op:", block)
	for _, k := range names {
		fmt.Fprintf(&b, "  %s %.1f ms", k, ms(ops[k]))
	}
	return b.String()
}
