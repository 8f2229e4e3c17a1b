package ui

// taps_test.go: keeping more taps from the Settings tab and looking at one in the
// Activations tab, headless.
//
// Invariant: every expectation is computed from the run's probe.Store with engine/probe's
// functions, never read back from the widget under test; the mutation that would silently
// break it: comparing the histogram with itself.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/ui/widgets"
)

// histogramTexts are the hover texts of every bin: its range and count.
func histogramTexts(h *widgets.Histogram, bins int) []string {
	var out []string
	for i := range bins {
		out = append(out, h.HoverText(i))
	}
	return out
}

// expectedHistogram is the histogram the panel should draw for values.
func expectedHistogram(values []float32) []string {
	h := widgets.NewHistogram()
	counts, lo, hi := probe.Histogram(values, 64)
	h.SetData(counts, lo, hi, "")
	return histogramTexts(h, 64)
}

// Settings → more taps keeps ln1 and ffn_act for the next run (their memory shown); the
// Activations tab then offers them, and the histogram, summary, top channels and per-patch
// maps are those of the selected tap.
func TestActivationsShowASelectedTap(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	a, st := h.in.panels.activation, h.in.panels.settings
	h.show("Activations")
	if got := a.tap.Options; !slices.Equal(got, []string{"out", "q", "k"}) {
		t.Errorf("tap choices by default %v, want out, q, k", got)
	}
	s := h.in.Snap
	rows, I := s.Layout.Rows(), s.Config.Intermediate
	actBytes := engine.FormatBytes(int64(rows) * int64(I) * 4 * int64(s.Config.Depth))
	h.show("Settings")
	if label := st.taps[engine.TapFFNAct].Text; !strings.Contains(label, actBytes) || !strings.Contains(label, "a pass per tile") {
		t.Errorf("ffn_act's check says %q, want its memory %s and its cost", label, actBytes)
	}
	st.taps[engine.TapFFNAct].SetChecked(true)
	st.taps[engine.TapLN1].SetChecked(true)
	gen := s.Gen
	st.apply()
	h.pump("the re-run with more taps", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Finished })
	if !h.said("more taps none → ln1, ffn_act", "re-running from block 0") {
		t.Errorf("no status line said the taps changed: %q", h.statuses)
	}
	s = h.in.Snap
	h.show("Activations")
	if got := a.tap.Options; !slices.Equal(got, []string{"out", "ln1", "q", "k", "ffn_act"}) {
		t.Fatalf("tap choices after keeping ln1 and ffn_act: %v", got)
	}
	h.show("Settings")
	if !strings.Contains(st.state.Text, "taps ln1, q, k, ffn_act, out") {
		t.Errorf("the settings do not say what is kept: %q", st.state.Text)
	}

	h.show("Activations")
	h.in.SelectBlock(2)
	h.in.SetOverlay(OverlayNorm)
	outHist := histogramTexts(a.hist, 64)
	a.tap.SetSelected("ffn_act")
	if h.in.Sel.Tap != "ffn_act" {
		t.Fatalf("selected tap %q after choosing ffn_act", h.in.Sel.Tap)
	}
	act, err := s.Probes.Tap("ffn_act", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(act) != rows*I {
		t.Fatalf("ffn_act of %d values, want %d x %d", len(act), rows, I)
	}
	want := expectedHistogram(act)
	if got := histogramTexts(a.hist, 64); !slices.Equal(got, want) || slices.Equal(got, outHist) {
		t.Errorf("the histogram is not ffn_act's:\n got %v\nwant %v", got[:3], want[:3])
	}
	mean, std, _, _ := probe.Summary(act)
	if sum := a.summary.Text; !strings.Contains(sum, fmt.Sprintf("mean %.4f  std %.4f", mean, std)) || !strings.Contains(sum, "select the tap out") {
		t.Errorf("summary %q, want ffn_act's mean %.4f std %.4f and no change", sum, mean, std)
	}
	if top := probe.TopChannelsOf(act, I, 12); !slices.Equal(a.top, top) {
		t.Errorf("top channels %v, want ffn_act's %v", a.top, top)
	}
	if norm := probe.RowStats(act, I).Norm; !slices.Equal(h.in.panels.image.values, norm) {
		t.Error("the L2 norm map is not ffn_act's")
	}
	if !strings.Contains(h.in.panels.image.caption.Text, "block 2 tap ffn_act: L2 norm per patch") {
		t.Errorf("caption %q", h.in.panels.image.caption.Text)
	}
	h.in.SetOverlay(OverlayChange)
	if h.in.panels.image.values != nil || !strings.Contains(h.in.panels.image.caption.Text, "defined for the block output") {
		t.Errorf("change of ffn_act: %d values, caption %q", len(h.in.panels.image.values), h.in.panels.image.caption.Text)
	}
	h.in.Sel.Channel = I + 1
	h.in.SetOverlay(OverlayChannel)
	if !strings.Contains(h.in.panels.image.caption.Text, fmt.Sprintf("outside 0..%d", I-1)) {
		t.Errorf("channel %d of ffn_act: caption %q", I+1, h.in.panels.image.caption.Text)
	}
	h.in.Sel.Channel = 5
	h.in.SetOverlay(OverlayChannel)
	if ch, _ := s.Probes.TapChannelMap("ffn_act", 2, 5); !slices.Equal(h.in.panels.image.values, ch) {
		t.Error("channel 5 map is not ffn_act's")
	}

	a.tap.SetSelected("out")
	h.in.SetOverlay(OverlayNorm)
	if !slices.Equal(h.in.panels.image.values, s.Stats[2].Norm) || !strings.Contains(a.summary.Text, "mean change") {
		t.Errorf("back on out: the map or the summary (%q) is not the output's", a.summary.Text)
	}
	if got := histogramTexts(a.hist, 64); !slices.Equal(got, outHist) {
		t.Error("back on out: the histogram is not the output's")
	}

	path := filepath.Join(t.TempDir(), "d.safetensors")
	if err := h.in.ExportDump(path); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blocks.3.ffn_act", "blocks.3.q", "blocks.0.k"} {
		if _, ok := f.Tensors[name]; !ok {
			t.Errorf("the exported dump lacks the kept tap %s", name)
		}
	}
}
