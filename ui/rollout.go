package ui

// rollout.go: attention rollout through a table built once per run and setting
// (probe.RolloutTable): the product of every block's head-fused attention, folded in block by
// block in the background as blocks finish, so a click or a hover reads the rollout of any
// query in microseconds instead of recomputing every block's attention for it (seconds at
// 1,900 patches). While the table has not reached the selected block the map says how far it
// is; a block below the last one is read from the table's history, or (past its memory)
// computed for the query alone. The whole-image rollout (the mean over the queries of a
// segment: Qwen has no CLS token) is a row of the same table.
//
// Invariant: a table serves only the run (Store) and the fusion and discard it was built for,
// and never a block it has not folded in. Mutation that would silently break it: keeping
// the table across a change of fusion or discard (or a new run) — the map would show the
// rollout of other settings under the new caption.

import (
	"context"
	"errors"
	"fmt"

	"github.com/turbospark/inspector/engine/probe"
)

// OverlayRolloutWhole colours every patch by the whole image's rollout: the mean over the
// queries of its image of their rollout rows.
const OverlayRolloutWhole = "rollout, whole image"

// rolloutHistory is the memory a table keeps for earlier blocks' products (rows of a block
// below the last one): all 27 blocks of an 8B tower at 1,024 patches, a few at 5,120.
const rolloutHistory = 256 << 20

// rolloutTable is the image panel's table and its build. UI goroutine only.
type rolloutTable struct {
	t     *probe.RolloutTable
	store *probe.Store
	opts  probe.RolloutOptions
	build latest
	err   error
}

// table is the table of s's run and options o, built (in the background) up to block upTo;
// nil with the error when it cannot be made. landed redraws as blocks are folded in.
func (r *rolloutTable) table(ctl *Controller, s *Snapshot, o probe.RolloutOptions, upTo int, landed func()) (*probe.RolloutTable, error) {
	if r.t == nil || r.store != s.Probes || r.opts != o {
		r.build.cancel()
		r.store, r.opts, r.err = s.Probes, o, nil
		t, err := s.Probes.NewRolloutTable(probe.TableOptions{Rollout: o, History: rolloutHistory})
		r.t, r.err = t, err
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.t.Blocks() > upTo || r.build.busy() {
		return r.t, nil
	}
	t := r.t
	r.build.start(ctl, func(ctx context.Context) (any, error) {
		return nil, t.Build(ctx, upTo, func(done, of int) { ctl.do(landed) }) // each block as it is folded in
	}, func(_ any, err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			r.err = err
		}
		landed()
	})
	return r.t, nil
}

// rolloutValues is the rollout of the query (whole: of the whole image) from block 0 to the
// selected block, read from the table.
func (p *imagePanel) rolloutValues(whole bool) ([]float32, string) {
	in, s := p.in, p.in.Snap
	o := probe.RolloutOptions{Fusion: p.opts.Fusion, Discard: p.opts.Discard}
	b, q := in.Sel.Block, in.Sel.Query
	caption := fmt.Sprintf("attention rollout (heads fused by %s, discard %s) from block 0 to block %d for the query patch",
		o.Fusion, discardName(o.Discard), b)
	if whole {
		caption = fmt.Sprintf("whole-image attention rollout (heads fused by %s, discard %s) from block 0 to block %d: the mean over its patches' rollouts",
			o.Fusion, discardName(o.Discard), b)
	}
	t, err := p.rollTable.table(in.Ctl, s, o, s.Next-1, p.landed)
	if err != nil {
		return nil, "rollout: " + err.Error()
	}
	if n := t.Blocks(); n <= b {
		done, frac := t.Progress()
		return nil, caption + fmt.Sprintf(" — building the rollout table: %d of %d blocks folded in (block %d %.0f%%)…", done, b+1, done, 100*frac)
	}
	var row []float32
	switch {
	case whole:
		row, err = t.WholeAt(b)
	case t.Blocks()-1 == b:
		row, _ = t.Row(q)
	default:
		row, err = t.RowAt(q, b)
	}
	if errors.Is(err, probe.ErrRowNotKept) { // a block below the table's history: this query alone
		probes := s.Probes
		key := fmt.Sprintf("%p/%d/%d/%v/%v", probes, b, q, o.Fusion, o.Discard)
		vals, err := p.rollout.get(in.Ctl, key, func(ctx context.Context) ([]float32, error) {
			return probes.Rollout(ctx, q, b, o)
		}, p.landed)
		return p.mapOrBusy(vals, err, "rollout", caption)
	}
	if err != nil {
		return nil, "rollout: " + err.Error()
	}
	return row, caption
}
