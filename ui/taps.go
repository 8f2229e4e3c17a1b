package ui

// taps.go: the taps (engine/tower/tap.go) the window can show for a block — out always (its
// per-patch statistics are computed for every block run), and the taps the run kept — their
// values and per-patch statistics (probe.RowStats; the math is engine/probe's), and the
// memory each would take to keep.
//
// Invariant: what the activations and the per-patch maps show is the selected tap of the
// selected block of the current snapshot; the mutation that would silently break it:
// reusing cached statistics across runs or blocks (a key without Gen or block) — after a
// re-run the maps would show the old run's tap under the new one's block.

import (
	"fmt"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/probe"
)

var tapOut = engine.TapOut.String()

// tapOptions are the taps the window can show for s's run: out, then the kept ones in graph
// order.
func tapOptions(s *Snapshot) []string {
	opts := []string{tapOut}
	for _, t := range s.Settings.Keep.Set().List() {
		if t != engine.TapOut {
			opts = append(opts, t.String())
		}
	}
	return opts
}

// notKept explains a missing full output: the page was over the probe budget.
const notKept = "block outputs are not kept for this page (over the probe memory budget): lower max pixels to see channels"

// tapNotKept says why a tap has no values: the budget for out, the settings for the others.
func tapNotKept(tap string) string {
	if tap == tapOut {
		return notKept
	}
	return fmt.Sprintf("tap %s is not kept for this run: keep it under Settings → more taps and re-run", tap)
}

// tapValues are block's values of tap, [S, W], and W.
func tapValues(s *Snapshot, tap string, block int) ([]float32, int, error) {
	x, err := s.Probes.Tap(tap, block)
	if err != nil {
		return nil, 0, fmt.Errorf("%s", tapNotKept(tap))
	}
	return x, len(x) / max(s.Layout.Rows(), 1), nil
}

// tapStats computes per-patch statistics of one tap of one block, keeping the last result
// (the image panel asks again on every redraw).
type tapStats struct {
	key   string
	stats probe.PatchStats
}

// of is block's per-patch statistics of tap: the run's own for out (with the change), the
// rows' norm, mean and max |x| for the others.
func (c *tapStats) of(s *Snapshot, tap string, block int) (probe.PatchStats, error) {
	if tap == tapOut {
		return s.Stats[block], nil
	}
	key := fmt.Sprintf("%d/%d/%s", s.Gen, block, tap)
	if key == c.key {
		return c.stats, nil
	}
	x, w, err := tapValues(s, tap, block)
	if err != nil {
		return probe.PatchStats{}, err
	}
	c.key, c.stats = key, probe.RowStats(x, w)
	return c.stats, nil
}

// tapMemory is what keeping t of every block costs for s's page ("" before a load), and
// what else it costs.
func tapMemory(s *Snapshot, t engine.Tap) string {
	if !s.Loaded() {
		return ""
	}
	note := engine.FormatBytes(engine.TapBytes(s.Config, t, s.Layout.Rows()))
	if t == engine.TapFFNAct {
		note += ", a pass per tile"
	}
	return note
}
