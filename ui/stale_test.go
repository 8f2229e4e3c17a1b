package ui

// stale_test.go: the window never shows an old run. After Restart, Apply and a new image,
// every panel of the Attention tab (the head grid, the top list, the block x head chart in
// both metrics, the attention matrix) and the Activations tab show nothing of the previous
// run until the new one reaches the selected block.

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/ui/control/controltest"
)

func TestNoPanelShowsAnOldRun(t *testing.T) {
	h := newHarnessOn(t, controltest.SlowBackends(40*time.Millisecond, "", -1))
	a := h.in.panels.attention
	photo2 := filepath.Join(t.TempDir(), "second.png")
	raw, err := os.ReadFile(demoPhoto)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(photo2, raw, 0o644)
	full := func(what string) {
		t.Helper()
		a.lower.SelectIndex(1) // the attention matrix is computed when shown
		h.pump(what+": the matrix", func() bool { return a.mtx.m != nil })
		h.pump(what+": the chart", func() bool { return len(h.headStats().Dist) == h.in.Snap.Config.Depth })
		if a.grid.Len() == 0 || math.IsNaN(a.matrix.Value(h.in.Sel.Block, 0)) {
			t.Fatalf("%s: the panels are not drawn (grid %d, chart %v)", what, a.grid.Len(), a.matrix.Value(h.in.Sel.Block, 0))
		}
	}
	empty := func(what string) {
		t.Helper()
		b := h.in.Sel.Block
		if a.grid.Len() != 0 {
			t.Errorf("%s: the head grid still shows %d maps of the old run", what, a.grid.Len())
		}
		if !strings.Contains(a.topk.Text, "has not run yet") {
			t.Errorf("%s: top list %q", what, a.topk.Text)
		}
		for _, metric := range []string{"entropy", "mean distance"} {
			a.metric.SetSelected(metric)
			for blk := h.in.Snap.Next; blk < h.in.Snap.Config.Depth; blk++ {
				if v := a.matrix.Value(blk, 0); !math.IsNaN(v) {
					t.Errorf("%s: the %s chart shows %v for block %d, not run in this run", what, metric, v, blk)
				}
			}
		}
		if a.mtx.m != nil || !strings.Contains(a.mtx.caption.Text, "has not run yet") || a.mtx.view.Image().Bounds().Dx() > 1 {
			t.Errorf("%s: the attention matrix of block %d still shows (caption %q)", what, b, a.mtx.caption.Text)
		}
	}
	h.openDemo()
	full("the first run")

	h.in.Ctl.Restart()
	h.pump("the restart", func() bool { return h.in.Snap.Next == 0 && !h.in.Snap.Finished })
	empty("after Restart")
	h.in.Ctl.RunAll()
	h.pump("the run", func() bool { return h.in.Snap.Finished })
	full("after Restart's run")

	gen := h.in.Snap.Gen
	h.in.panels.settings.form.tile.SetText("64")
	h.in.panels.settings.apply()
	h.pump("Apply's new run", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Next <= h.in.Sel.Block && !h.in.Snap.Finished })
	empty("after Apply")
	h.pump("Apply's run", func() bool { return h.in.Snap.Finished })
	full("after Apply's run")

	h.in.Sel.Block = h.in.Snap.Config.Depth - 1
	gen = h.in.Snap.Gen
	h.in.OpenFiles(demoDir, photo2)
	h.pump("a new image's run", func() bool {
		return h.in.Snap.Gen != gen && h.in.Snap.ImagePath == photo2 && h.in.Snap.Next <= h.in.Sel.Block && !h.in.Snap.Finished
	})
	empty("after a new image")
}
