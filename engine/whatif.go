package engine

// whatif.go: what an intervention changes, measured against the session's own finished run:
// one run under other settings (WhatIf), or one ablation per head or block (Sweep, the
// CLI's sweep and the window's head-importance matrix).
//
// Invariant: every effect compares with the session's unmodified run of the same page, whose
// block outputs it kept; a block before the intervention's first block changes by exactly 0
// (the engine leaves earlier blocks bit for bit). Mutation that would silently break it:
// comparing a sweep's run with the previous ablated one: every row would then measure two
// ablations at once (TestSweepRowsAgainstBase).

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/probe"
)

// Effect is how far an intervention moved the run: per block ||out - base|| / ||base|| over
// the whole output, the merger's likewise, and per block each patch's largest |out - base|
// over its channels (rows in the run's layout order).
type Effect struct {
	Blocks     []float64
	Merger     float64
	PatchDiffs [][]float32
	// Probes is the intervened run's kept taps (WhatIf: the outputs, and q|k when the session
	// keeps them, so its attention maps can be drawn); nil in a sweep's rows.
	Probes *probe.Store
	// After a token drop: the block after which it dropped them, and the rows the later
	// blocks ran (KeptRows 0: no drop). Blocks after DropAfter and Merger then measure the
	// kept rows and tokens only.
	DropAfter, KeptRows int
}

// RelChange is ||a - b|| / ||b|| in float64 (||a - b|| when b is all zeros; 0 when a is b bit
// for bit).
func RelChange(a, b []float32) float64 {
	return relChangeRows(a, b, len(b), slices.Values([]int{0}))
}

// baseOutputs is the session's finished run's block outputs, or why there are none.
func (s *Session) baseOutputs() ([][]float32, error) {
	if s.Run == nil || !s.Run.Finished() {
		return nil, errors.New("run the page to the end first (Run all): the effect is measured against the finished run")
	}
	out := s.Run.Probes.Outputs()
	if len(out) != s.Checkpoint.Config.Depth {
		return nil, errors.New("the run did not keep its block outputs (the page is too large for the memory the probes may use)")
	}
	return out, nil
}

// effectOf compares run (finished) with base's outputs and merger; per patch too when width
// (the outputs' channels) is not 0. After a token drop, a later block is compared over the
// rows it ran and the merger over the tokens kept (a dropped row's difference is NaN: no
// colour in the map), so the change measured is of what remains.
func effectOf(run *Run, base [][]float32, merger []float32, width int) Effect {
	after, rows := run.Dropped()
	O := run.Config().OutHidden
	e := Effect{Merger: RelChange(run.Merger, merger)}
	if rows != nil {
		units := run.KeptUnits()
		e.Merger = relChangeRows(run.Merger, merger, O, func(yield func(int) bool) {
			for _, u := range units {
				if !yield(int(u)) {
					return
				}
			}
		})
		e.DropAfter, e.KeptRows = after, len(rows)
	}
	D := run.Config().Hidden
	for b, o := range run.Probes.Outputs() {
		dropped := rows != nil && b > after
		if dropped {
			e.Blocks = append(e.Blocks, relChangeRows(o, base[b], D, slices.Values(rows)))
		} else {
			e.Blocks = append(e.Blocks, RelChange(o, base[b]))
		}
		if width > 0 {
			d := probe.PatchDiff(o, base[b], width)
			if dropped {
				for r := range d {
					if run.Probes.Dropped(b, r) {
						d[r] = float32(math.NaN())
					}
				}
			}
			e.PatchDiffs = append(e.PatchDiffs, d)
		}
	}
	return e
}

// relChangeRows is RelChange over the listed rows (of width W) of a and b.
func relChangeRows(a, b []float32, W int, rows iter.Seq[int]) float64 {
	var d, n float64
	for r := range rows {
		for i := r * W; i < (r+1)*W; i++ {
			x := float64(a[i]) - float64(b[i])
			d += x * x
			n += float64(b[i]) * float64(b[i])
		}
	}
	if n == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / n)
}

// WhatIf runs the session's page under set (its interventions; the page and the max pixels
// kept) on be, to the end, and measures its effect against the session's finished run.
// progress follows the blocks (done of depth). be is closed with the run.
func (s *Session) WhatIf(ctx context.Context, set Settings, be backend.Backend, progress func(done, of int)) (*Effect, error) {
	base, err := s.baseOutputs()
	if err != nil {
		be.Close()
		return nil, err
	}
	set.Keep = Keep{Outputs: true, Attention: s.Settings.Keep.Attention, Budget: s.Settings.Keep.Budget}
	other, err := s.Sibling(ctx, set, be)
	if err != nil {
		return nil, err
	}
	defer other.Close()
	depth := s.Checkpoint.Config.Depth
	for other.Run.Next() < depth {
		if _, err := other.Run.Step(ctx); err != nil {
			return nil, err
		}
		progress(other.Run.Next(), depth)
	}
	if _, err := other.Run.Finish(ctx); err != nil {
		return nil, err
	}
	if len(other.Run.Probes.Outputs()) != depth {
		return nil, errors.New("the intervened run could not keep its block outputs")
	}
	e := effectOf(other.Run, base, s.Run.Merger, s.Checkpoint.Config.Hidden)
	e.Probes = other.Run.Probes // host memory: outlives the run's backend buffers
	return &e, nil
}

// SweepRow is one ablated run of a sweep: what it ablated and how far it moved the outputs.
type SweepRow struct {
	Block  int       `json:"block"`
	Head   string    `json:"head"` // a head's index, or "*" for the block's every head
	Merger float64   `json:"merger_rel_change"`
	Blocks []float64 `json:"block_rel_change"` // per block: ||out - base|| / ||base||
}

// CheckSweep refuses, before the base run, a sweep whose ablated runs would not fit: each is a
// second run of the page on this session's engine (its weights and page shared), beside the
// base run's kept outputs, and a refusal after the base run would cost the user that run.
func (s *Session) CheckSweep() error {
	est := EstimateMemory(s.Checkpoint, s.Input, s.Settings)
	est.Weights, est.Mapping, est.Held = 0, 0, 0 // the engine's and the page's, made already
	if err := guard.Check(est, guard.Limits(s.Settings.MaxMemory), guard.RunTip); err != nil {
		return fmt.Errorf("the sweep's ablated runs (one at a time, beside this run): %w", err)
	}
	return nil
}

// Sweep runs the session's page once per head (over "heads") or block (over "blocks") with it
// ablated (mode: AblateZero or AblateMean), on the session's engine (the weights read once),
// against the session's finished run. Each run starts at its ablated block from the finished
// run's state there (Run.Resume: the blocks before it are the same bit for bit), so a sweep
// costs about half the blocks of running each from block 0. progress follows the runs.
func (s *Session) Sweep(ctx context.Context, over, mode string, progress func(done, of int)) ([]SweepRow, error) {
	if over != "heads" && over != "blocks" {
		return nil, fmt.Errorf("sweep over %q: want heads or blocks", over)
	}
	base, err := s.baseOutputs()
	if err != nil {
		return nil, err
	}
	c := s.Checkpoint.Config
	var units []SweepRow // what each run ablates: Block and Head
	for b := range c.Depth {
		if over == "blocks" {
			units = append(units, SweepRow{Block: b, Head: "*"})
			continue
		}
		for h := range c.Heads {
			units = append(units, SweepRow{Block: b, Head: strconv.Itoa(h)})
		}
	}
	var rows []SweepRow
	for i, u := range units {
		a, err := ParseAblation(fmt.Sprintf("%d:%s", u.Block, u.Head), mode)
		if err != nil {
			return nil, err
		}
		run, err := s.Engine.StartWith(s.Input, a)
		if err != nil {
			return nil, err
		}
		// A patched session's run differs from StartWith's before the block; a base that did
		// not keep every tap this run keeps cannot lend them: both run from block 0.
		if s.patch == nil && run.Resume(s.Run, u.Block) != nil {
			run.Close()
			if run, err = s.Engine.StartWith(s.Input, a); err != nil {
				return nil, err
			}
		}
		err = run.RunAll(ctx)
		if err == nil {
			e := effectOf(run, base, s.Run.Merger, 0)
			u.Merger, u.Blocks = e.Merger, e.Blocks
			rows = append(rows, u)
		}
		run.Close()
		if err != nil {
			return nil, err
		}
		progress(i+1, len(units))
	}
	return rows, nil
}
