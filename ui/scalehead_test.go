package ui

import (
	"strings"
	"testing"
)

// Scaling heads in What if (a field made from intervene's table): nothing moves before the
// block, the block moves; a bad value names the field and runs nothing; applied, the run's
// settings hold it; both Compare sides offer the field and read it.
func TestWhatIfScaleHead(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	p := h.in.panels.whatIf
	if len(p.kinds) != 1 {
		t.Fatalf("What if has %d fields from intervene's table, want 1 (scale heads)", len(p.kinds))
	}
	var got *WhatIfResult
	show := h.in.Ctl.OnWhatIf
	h.in.Ctl.OnWhatIf = func(r *WhatIfResult) { got = r; show(r) }
	p.kinds[0].SetText("2:1=9")
	p.run()
	h.pump("what if (a head scaled)", func() bool { return got != nil })
	if firstMoved(got.Blocks) != 2 || got.Merger == 0 {
		t.Fatalf("head 1 of block 2 times 9: blocks %v, merger %v", got.Blocks, got.Merger)
	}
	p.kinds[0].SetText("2:1")
	if _, err := p.settings(); err == nil || !strings.Contains(err.Error(), "scale heads") {
		t.Errorf("a factorless scale: %v, want an error naming the field", err)
	}
	p.kinds[0].SetText("2:1=9")
	p.apply()
	h.pump("the run with the scaling", func() bool {
		return h.in.Snap != nil && h.in.Snap.Finished && h.in.Ctl.Settings().ScaleHead == "2:1=9"
	})
	c := h.in.panels.compare
	for _, f := range [](*settingsForm){c.a, c.b} {
		if len(f.kinds) != 1 {
			t.Fatalf("a Compare side has %d fields from intervene's table", len(f.kinds))
		}
	}
	c.b.kinds[0].SetText("0:0=0.5")
	if s, err := c.b.Settings(); err != nil || s.ScaleHead != "0:0=0.5" {
		t.Errorf("Compare's b side reads %q, %v", s.ScaleHead, err)
	}
}
