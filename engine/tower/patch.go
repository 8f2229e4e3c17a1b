package tower

// patch.go: activation and head patching as a run applies them (engine/intervene: the
// OutputPatch and HeadPatch hooks): Run.PatchOutput, PatchHead and CaptureAttn put a patch on
// a run before its block runs (a Session with a PatchFrom setting makes its patch from a
// source image and puts it on every run: engine/session.go).
//
// Invariant: the replaced rows are the source run's block output (or attn) at the same
// patches, taken in the blocks' row order (both runs share the layout), and everything after
// the block (the kept output, the statistics, the deepstack merger, the next block) sees the
// patched state, as transformers' forward hook on the block gives it.
// Mutation that would silently break it: patching after the deepstack merger has read the
// block's output (Qwen3-VL): the deepstack feature would miss the patch
// (TestActivationPatchParity compares the deepstack outputs too).

import (
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
