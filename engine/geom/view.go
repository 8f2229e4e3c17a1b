package geom

// view.go: what each block of a run works over, read alike by the graph (which rows it runs,
// which keys its attention reads) and by every probe (which keys a map scores, which queries
// a block had): the page rows the block runs, its attention segments over them with each
// segment's key range, and the keys no query of the block sees. Interventions shape it (a key
// mask from a block on, a token drop after a block) through MaskKeys and Drop; nobody reads an
// intervention to learn it, as nobody asks a family which blocks are windowed (SegmentsOf).
//
// Invariant: a change shapes only the blocks after the one it comes from (MaskKeys from
// block F: blocks >= F; Drop after block A: blocks > A), so a view a block was run with, and
// every probe of that block, stays what it was; a segment whose every key is masked is refused
// (softmax over nothing is NaN in transformers). Read under a lock: the probes of earlier
// blocks run while the run drops tokens.
// Mutation that would silently break it: cutting the segments to the kept rows from block A
// rather than A+1 — block A's maps would score only the kept keys, block A ran them all
// (TestViewsDropShapesOnlyLaterBlocks; engine's TestTokenDropParity).

import (
	"fmt"
	"sync"

	"github.com/turbospark/inspector/engine/backend"
)

// View is one block's view of the page. Rows and keys are numbered in the blocks' row order.
type View struct {
	// Rows are the page rows the block runs, increasing (nil: every row). The graph's buffers
	// hold them compacted: the block's row n is page row Rows[n].
	Rows []int
	// Dropped says, per page row, that the block does not run it (nil: none).
	Dropped []bool
	// Masked says, per page row, that no query of the block sees its key: masked, or dropped
	// (nil: none).
	Masked []bool
	// Segments are the block's attention segments over the rows it runs (numbered as the
	// graph holds them); with a key range each (KeyStart, KeyEnd into Keys) when some keys
	// are masked.
	Segments []backend.Segment
	// Keys are the rows (numbered as the graph holds them) whose keys the block reads, in
	// order, when some are masked (nil: every row's).
	Keys []int

	maskOn   []bool // the key mask over the rows the block runs (nil: none)
	label    string // how errors name the key mask
	block    int
	windowed bool
}

// Views is a run's views of its blocks.
type Views struct {
	lay   *Layout
	depth int

	mu        sync.RWMutex
	maskFrom  int
	masked    []bool // per page row (nil: no key mask)
	maskLabel string // how errors name the key mask
	dropAfter int    // -1: no drop
	kept      []int  // page rows run after the drop
	dropped   []bool // per page row
	union     []bool // masked or dropped, per page row, while both are set (made once: the probes read it per query)
}

// NewViews is the views of a tower of depth blocks over lay: every block runs every row and
// sees every key, within its frames or windows (SegmentsOf).
func NewViews(lay *Layout, depth int) *Views {
	return &Views{lay: lay, depth: depth, dropAfter: -1}
}

// Layout is the page the views are of.
func (v *Views) Layout() *Layout { return v.lay }

// MaskKeys makes the keys of the page rows where masked is true unseen by every query from
// block from on (label names the mask in errors). Before the first block runs; refused when
// it would leave some segment of some block with no key.
func (v *Views) MaskKeys(from int, masked []bool, label string) error {
	if from < 0 || from >= v.depth {
		return fmt.Errorf("%s from block %d: the tower has blocks 0-%d", label, from, v.depth-1)
	}
	if len(masked) != v.lay.Rows() {
		return fmt.Errorf("%s: %d rows for a page of %d", label, len(masked), v.lay.Rows())
	}
	v.mu.Lock()
	v.maskFrom, v.masked, v.maskLabel = from, masked, label
	v.unite()
	v.mu.Unlock()
	for i := from; i < v.depth; i++ {
		if _, err := v.Of(i).keyed(); err != nil {
			v.mu.Lock()
			v.masked = nil
			v.unite()
			v.mu.Unlock()
			return err
		}
	}
	return nil
}

// MasksKeys says whether some block reads only some of its rows' keys.
func (v *Views) MasksKeys() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.masked != nil
}

// Drop makes the blocks after block after run only the page rows kept (increasing). Refused
// when the key mask would then leave some segment with no key.
func (v *Views) Drop(after int, kept []int) error {
	S := v.lay.Rows()
	dropped := make([]bool, S)
	for i := range dropped {
		dropped[i] = true
	}
	for _, r := range kept {
		dropped[r] = false
	}
	v.mu.Lock()
	oldAfter, oldKept := v.dropAfter, v.kept
	v.dropAfter, v.kept, v.dropped = after, kept, dropped
	v.unite()
	v.mu.Unlock()
	for i := after + 1; i < v.depth; i++ {
		if _, err := v.Of(i).keyed(); err != nil {
			v.mu.Lock()
			v.dropAfter, v.kept, v.dropped = oldAfter, oldKept, nil
			v.unite()
			v.mu.Unlock()
			return fmt.Errorf("after the token drop (%d rows kept, numbered 0-%d): %w", len(kept), len(kept)-1, err)
		}
	}
	return nil
}

// unite makes union the masked or dropped rows while both are set (nil otherwise). Callers
// hold mu.
func (v *Views) unite() {
	v.union = nil
	if v.masked == nil || v.dropped == nil {
		return
	}
	v.union = make([]bool, len(v.masked))
	for i := range v.union {
		v.union[i] = v.masked[i] || v.dropped[i]
	}
}

// DropAfter is the block after which the run dropped rows, and the rows it kept (-1, nil:
// none).
func (v *Views) DropAfter() (int, []int) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.dropAfter, v.kept
}

// Of is block's view.
func (v *Views) Of(block int) View { return v.of(block, false) }

// Held is block's view over the rows the run holds now: Of, except that after a drop the
// kept rows are held whatever the block (the drop's own block replayed, to find a NaN, runs
// them: engine's Run.checkBlock).
func (v *Views) Held(block int) View { return v.of(block, true) }

func (v *Views) of(block int, held bool) View {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var view View
	segs := v.lay.SegmentsOf(block)
	if v.dropped != nil && (held || block > v.dropAfter) {
		view.Rows, view.Dropped = v.kept, v.dropped
		segs = cutSegments(segs, v.dropped)
	}
	view.Segments = segs
	masked := v.masked != nil && block >= v.maskFrom
	switch {
	case masked && view.Dropped != nil:
		view.Masked = v.union
	case masked:
		view.Masked = v.masked
	case view.Dropped != nil:
		view.Masked = view.Dropped
	}
	if masked {
		view.maskOn = v.maskOf(view.Rows)
		view.label, view.block, view.windowed = v.maskLabel, block, v.lay.Windowed(block)
	}
	return view
}

// maskOf is the key mask over rows (the page's rows listed, or all of them when nil).
func (v *Views) maskOf(rows []int) []bool {
	if rows == nil {
		return v.masked
	}
	out := make([]bool, len(rows))
	for n, r := range rows {
		out[n] = v.masked[r]
	}
	return out
}

// Keyed is the view with its key ranges filled (Keys and each segment's KeyStart/KeyEnd)
// when some of its keys are masked; the view itself when none are.
func (view View) Keyed() (View, error) { return view.keyed() }

func (view View) keyed() (View, error) {
	if view.maskOn == nil {
		return view, nil
	}
	unmasked := make([]bool, len(view.maskOn))
	view.Keys = nil
	for r, m := range view.maskOn {
		if unmasked[r] = !m; !m {
			view.Keys = append(view.Keys, r)
		}
	}
	before := CountBefore(unmasked) // a row range's keys are contiguous among the kept keys
	segs := make([]backend.Segment, 0, len(view.Segments))
	for _, sg := range view.Segments {
		ks := backend.Segment{Start: sg.Start, End: sg.End, KeyStart: before[sg.Start], KeyEnd: before[sg.End]}
		if ks.KeyEnd == ks.KeyStart && sg.Len() > 0 {
			what := "image"
			if view.windowed {
				what = "attention window"
			}
			return View{}, fmt.Errorf("%s: it masks every patch of the %s of rows %d-%d in block %d, whose queries would attend to nothing", view.label, what, sg.Start, sg.End-1, view.block)
		}
		segs = append(segs, ks)
	}
	view.Segments = segs
	return view, nil
}

// cutSegments is segs over the rows not dropped, renumbered (empty ones left out).
func cutSegments(segs []backend.Segment, dropped []bool) []backend.Segment {
	kept := make([]bool, len(dropped))
	for i, d := range dropped {
		kept[i] = !d
	}
	before := CountBefore(kept)
	var out []backend.Segment
	for _, sg := range segs {
		if n := (backend.Segment{Start: before[sg.Start], End: before[sg.End]}); n.Len() > 0 {
			out = append(out, n)
		}
	}
	return out
}

// CountBefore is, for each row r and r = len(in), how many rows before r are in: a row range
// [a, b) holds CountBefore[b] - CountBefore[a] of them, numbered from CountBefore[a] on.
func CountBefore(in []bool) []int {
	before := make([]int, len(in)+1)
	for r, ok := range in {
		before[r+1] = before[r]
		if ok {
			before[r+1]++
		}
	}
	return before
}
