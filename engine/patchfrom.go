package engine

// patchfrom.go: activation and head patching as a run and a session apply them
// (engine/intervene: the OutputPatch and HeadPatch hooks): Run.PatchOutput, PatchHead and
// CaptureAttn put a patch on a run before its block runs; a Session with a PatchFrom setting
// runs the source image to the block once and puts the patch on every run.
//
// Invariant: the replaced rows are the source run's block output (or attn) at the same
// patches, taken in the blocks' row order (both runs share the layout), and everything after
// the block (the kept output, the statistics, the deepstack merger, the next block) sees the
// patched state, as transformers' forward hook on the block gives it.
// Mutation that would silently break it: patching after the deepstack merger has read the
// block's output (Qwen3-VL): the deepstack feature would miss the patch
// (TestActivationPatchParity compares the deepstack outputs too).

import (
	"context"
	"fmt"

	"github.com/turbospark/inspector/engine/intervene"
)

// PatchOutput makes block's output take source's rows at the patches rows (pixel_values
// rows); source is another run's output of the same block, [S, D] in the blocks' row order
// (Probes.Output, or Hidden right after the block). Before the block runs.
func (r *Run) PatchOutput(block int, rows []int, source []float32) error {
	lrows, err := r.patchRows(block, rows, source)
	if err != nil {
		return err
	}
	r.g.hooks = append(r.g.hooks, &intervene.OutputPatch{Block: block, Rows: lrows, Source: source})
	r.patched = true
	return nil
}

// PatchHead makes block's attn take source's values in head's columns at the patches rows
// (pixel_values rows) before proj reads it; source is another run's attn of the block, [S, D]
// in the blocks' row order (CaptureAttn). Before the block runs.
func (r *Run) PatchHead(block, head int, rows []int, source []float32) error {
	c := r.Config()
	if err := r.patchable(block); err != nil {
		return err
	}
	if head < 0 || head >= c.Heads {
		return fmt.Errorf("patch head %d: block %d has heads 0-%d", head, block, c.Heads-1)
	}
	lrows, err := r.patchRows(block, rows, source)
	if err != nil {
		return err
	}
	hd := c.HeadDim()
	r.g.hooks = append(r.g.hooks, &intervene.HeadPatch{Block: block, Rows: lrows, C0: head * hd, C1: (head + 1) * hd, Source: source})
	r.patched = true
	return nil
}

// CaptureAttn hands block's attn (what proj reads: [S, D] in the blocks' row order, after any
// ablation) to f when the block runs: the source of a head patch. Before the block runs.
func (r *Run) CaptureAttn(block int, f func(attn []float32)) {
	r.g.hooks = append(r.g.hooks, &intervene.HeadPatch{Block: block, Capture: f})
	r.patched = true
}

// patchable refuses a patch of a block that has run or is not in the tower.
func (r *Run) patchable(block int) error {
	if c := r.Config(); block < r.next || block >= c.Depth {
		return fmt.Errorf("patch block %d: the run is at block %d of %d (a block not yet run)", block, r.next, c.Depth)
	}
	return nil
}

// patchRows checks a patch of block from source at rows (pixel_values rows) and returns the
// rows in the blocks' order.
func (r *Run) patchRows(block int, rows []int, source []float32) ([]int, error) {
	c := r.Config()
	S, D := r.Layout.Rows(), c.Hidden
	if err := r.patchable(block); err != nil {
		return nil, err
	}
	switch {
	case len(source) != S*D:
		return nil, fmt.Errorf("patch block %d: the source holds %d values, the page %d rows of %d", block, len(source), S, D)
	}
	if k := r.e.Settings.KeepTop; !k.None() && block > k.After { // its rows are compacted
		return nil, fmt.Errorf("patch block %d: the run drops tokens after block %d (%s); patch a block up to %d", block, k.After, k.String(), k.After)
	}
	var lrows []int
	for _, row := range rows {
		if row < 0 || row >= S {
			return nil, fmt.Errorf("patch row %d: the page has %d patches (0-%d)", row, S, S-1)
		}
		lrows = append(lrows, r.Layout.RowOfProcessor(row))
	}
	return lrows, nil
}

// sessionPatch is a session's activation patch: the source image's block output (head -1)
// or a head's attn slice at rows, applied to every run of the session (patchFrom computes it
// once).
type sessionPatch struct {
	block, head int
	rows        []int
	source      []float32
}

// apply puts the patch on run (fresh).
func (p *sessionPatch) apply(run *Run) error {
	if p.head >= 0 {
		return run.PatchHead(p.block, p.head, p.rows, p.source)
	}
	return run.PatchOutput(p.block, p.rows, p.source)
}

// patchFrom makes the session's patch from its PatchFrom setting: the image is made into a
// page as the session's was (the same processor settings), must give the same page, and runs
// to the block on the session's engine (with the session's ablation and mask); ctx stops
// that run between (and inside) its ops, as it stops any run.
func (s *Session) patchFrom(ctx context.Context, spec string) error {
	_, image, block, head, patches, err := ParsePatchFrom(spec)
	if err != nil || image == "" {
		return err
	}
	if c := s.Checkpoint.Config; block >= c.Depth || head >= c.Heads {
		return fmt.Errorf("patch-from block %d head %d: the tower has blocks 0..%d of heads 0..%d", block, head, c.Depth-1, c.Heads-1)
	}
	if err := ctx.Err(); err != nil { // stopped while this session's own page was made
		return err
	}
	src, err := s.Checkpoint.LoadPage(image, s.Settings.MaxMemory)
	if err != nil {
		return err
	}
	if a, b := src.Grids[0], s.Input.Grids[0]; len(src.Grids) != len(s.Input.Grids) || a != b {
		return fmt.Errorf("%s: its page is %v patches (t, h, w), this one's %v: patching needs the same page (an image of the same size, or the same max pixels)", image, a, b)
	}
	rows, err := patches.Rows(s.Run.Layout)
	if err != nil {
		return err
	}
	run, err := s.Engine.Start(src)
	if err != nil {
		return err
	}
	defer run.Close()
	var attn []float32
	if head >= 0 {
		run.CaptureAttn(block, func(a []float32) { attn = a })
	}
	for run.Next() <= block {
		if _, err := run.Step(ctx); err != nil {
			return fmt.Errorf("%s: %w", image, err)
		}
	}
	s.patch = &sessionPatch{block: block, head: head, rows: rows, source: run.Hidden()}
	if head >= 0 {
		s.patch.source = attn
	}
	return s.patch.apply(s.Run)
}
