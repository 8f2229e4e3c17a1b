package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
)

// WhatIf against the session's finished run: no intervention moves nothing (every block, every
// patch, the merger: exactly 0); ablating block 2's heads moves nothing before block 2 and
// something from it on, and its merger change is RelChange of the two runs' mergers; an
// unfinished base run is refused.
func TestWhatIf(t *testing.T) {
	ctx := context.Background()
	sess := runTinySession(t, engine.Settings{Residency: engine.Mapped})
	if _, err := sess.WhatIf(ctx, sess.Settings, cpuBackend(), func(int, int) {}); err == nil || !strings.Contains(err.Error(), "Run all") {
		t.Fatalf("an unfinished base run: %v", err)
	}
	must(t, sess.Run.RunAll(ctx))
	var seen []int
	none, err := sess.WhatIf(ctx, sess.Settings, cpuBackend(), func(done, of int) { seen = append(seen, done) })
	must(t, err)
	if len(seen) != 4 || seen[3] != 4 {
		t.Errorf("progress %v, want 1..4", seen)
	}
	if none.Merger != 0 {
		t.Errorf("no intervention moved the merger by %g", none.Merger)
	}
	for b, v := range none.Blocks {
		if v != 0 || maxOf32(none.PatchDiffs[b]) != 0 {
			t.Errorf("no intervention moved block %d by %g", b, v)
		}
	}
	s := sess.Settings
	a, err := engine.ParseAblation("2:*", engine.AblateZero)
	must(t, err)
	s.Ablate = a
	e, err := sess.WhatIf(ctx, s, cpuBackend(), func(int, int) {})
	must(t, err)
	for b, v := range e.Blocks {
		if moved := v != 0 && maxOf32(e.PatchDiffs[b]) > 0; moved != (b >= 2) {
			t.Errorf("ablating block 2: block %d moved by %g", b, v)
		}
	}
	other := runTinySession(t, s)
	must(t, other.Run.RunAll(ctx))
	if want := engine.RelChange(other.Run.Merger, sess.Run.Merger); e.Merger != want || want == 0 {
		t.Errorf("merger change %g, the two runs give %g", e.Merger, want)
	}
}

// Every sweep row is measured against the session's unablated run, bit for bit what running
// its ablation alone from block 0 gives (WhatIf): a sweep run resumes at its block from the
// base run's state, and comparing with the previous row's run would count two ablations.
func TestSweepRowsAgainstBase(t *testing.T) {
	ctx := context.Background()
	sess := runTinySession(t, engine.Settings{Residency: engine.Mapped})
	must(t, sess.Run.RunAll(ctx))
	rows, err := sess.Sweep(ctx, "heads", engine.AblateMean, func(int, int) {})
	must(t, err)
	c := sess.Checkpoint.Config
	if len(rows) != c.Depth*c.Heads {
		t.Fatalf("%d rows, want %d", len(rows), c.Depth*c.Heads)
	}
	for _, r := range rows { // each resumed at its block from the base run's state
		s := sess.Settings
		a, err := engine.ParseAblation(strconv.Itoa(r.Block)+":"+r.Head, engine.AblateMean)
		must(t, err)
		s.Ablate = a
		e, err := sess.WhatIf(ctx, s, cpuBackend(), func(int, int) {})
		must(t, err)
		if r.Merger != e.Merger || r.Merger == 0 {
			t.Errorf("row %d:%s: merger change %g, alone %g", r.Block, r.Head, r.Merger, e.Merger)
		}
		for b := range e.Blocks {
			if r.Blocks[b] != e.Blocks[b] {
				t.Errorf("row %d:%s: block %d changed by %g, alone %g", r.Block, r.Head, b, r.Blocks[b], e.Blocks[b])
			}
		}
	}
	if _, err := sess.Sweep(ctx, "layers", engine.AblateMean, func(int, int) {}); err == nil {
		t.Error("sweep over layers accepted")
	}
}

func maxOf32(v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
