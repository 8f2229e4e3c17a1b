package tower

// rows.go: the run's side of the seam (engine/intervene) — the hook points a run calls after
// a block (OutputHook, RowsHook) through one BlockSite, and the rows the graph runs once a
// hook made the later blocks run a subset of the page (intervene.BlockSite.RunRows: a token
// drop). The graph then holds those rows compacted, and what a run shows stays page-shaped:
// a later block's kept taps are expanded back to the page (a row not run keeps its output from
// the block before the subset, unchanged, as its state is; its other taps and its q|k are 0),
// and the mergers' missing tokens are 0 rows.
//
// Invariant: running every row changes no bit (the compaction is then the identity); the
// hidden state, the rope tables and the views (geom.Views.Drop) are cut to the same rows
// together. Mutation that would silently break it: compacting the hidden state but not the
// rope tables — every kept patch would be rotated as another patch's position, the maps still
// plausible (TestTokenDropParity, against transformers).

import (
	"context"
	"slices"

	"github.com/turbospark/inspector/engine/intervene"
)

// blockSite is the run right after block i, as the hooks see it (intervene.BlockSite).
type blockSite struct {
	r     *Run
	block int
}

func (s blockSite) Block() int        { return s.block }
func (s blockSite) Output() []float32 { return s.r.cur }

// SetRows writes src's rows into the block's output, on the host (r.cur, the kept output)
// and in the backend's hidden state.
func (s blockSite) SetRows(rows []int, src []float32) {
	D := s.r.Config().Hidden
	for _, row := range rows {
		copy(s.r.cur[row*D:(row+1)*D], src[row*D:(row+1)*D])
	}
	s.r.e.Backend.Upload(v(s.r.g.buf.h), s.r.cur)
}

// Received is the attention each row received in the block, from its q|k (taken for the hook
// when the run keeps none: QKHook).
func (s blockSite) Received(ctx context.Context) ([]float64, error) {
	qk, err := s.r.hookQK, error(nil)
	if qk == nil {
		if qk, err = s.r.Probes.QK(s.block); err != nil {
			return nil, err
		}
	}
	return s.r.Probes.ReceivedOf(ctx, s.block, qk)
}

// RunRows makes the blocks after this one run rows only: the views first (refusing what the
// key mask cannot then run), then the graph's state compacted.
func (s blockSite) RunRows(rows []int) error {
	r := s.r
	if err := r.g.views.Drop(s.block, rows); err != nil {
		return err
	}
	m2 := r.Config().MergeSize * r.Config().MergeSize
	sub := &rowSubset{after: s.block, rows: rows, frozen: r.cur}
	for n := 0; n < len(rows); n += m2 {
		sub.units = append(sub.units, rows[n]/m2)
	}
	r.curOwn = false // the rows not run read their state from it for the rest of the run
	r.g.compact(rows, r.cur, r.Layout.RopeTables)
	r.sub, r.hookQK = sub, nil
	return nil
}

// afterBlock calls the OutputHooks on block i's output, before anything reads it.
func (r *Run) afterBlock(i int) {
	for _, h := range r.g.hooks {
		if o, ok := h.(intervene.OutputHook); ok {
			o.AfterBlock(blockSite{r, i})
		}
	}
}

// beforeNext calls the RowsHooks after block i and its deepstack merger.
func (r *Run) beforeNext(ctx context.Context, i int) error {
	for _, h := range r.g.hooks {
		if o, ok := h.(intervene.RowsHook); ok {
			if err := o.BeforeNext(ctx, blockSite{r, i}); err != nil {
				return err
			}
		}
	}
	return nil
}

// needsQK says whether a hook reads the q|k of the block in flight (QKHook).
func (r *Run) needsQK() bool {
	for _, h := range r.g.hooks {
		if q, ok := h.(intervene.QKHook); ok && q.NeedsQK(r.next) {
			return true
		}
	}
	return false
}

// Dropped says which rows the run dropped after which block (nil rows, -1: none).
func (r *Run) Dropped() (after int, kept []int) {
	if r.sub == nil {
		return -1, nil
	}
	return r.sub.after, r.sub.rows
}

// KeptUnits is the merged tokens a token drop kept, in the merger's row order (the
// processor's), increasing; nil when the run dropped none.
func (r *Run) KeptUnits() []int64 {
	if r.sub == nil {
		return nil
	}
	m2 := r.Config().MergeSize * r.Config().MergeSize
	var out []int64
	for _, u := range r.sub.units {
		out = append(out, int64(r.Layout.ProcessorRow(u*m2)/m2))
	}
	slices.Sort(out)
	return out
}

// expand returns x ([len(rows), W]: a later block's tap over the rows run) on the page
// ([S, W]), the other rows from fill (nil: 0).
func (d *rowSubset) expand(x []float32, W, S int, fill []float32) []float32 {
	out := make([]float32, S*W)
	if fill != nil {
		copy(out, fill)
	}
	for n, row := range d.rows {
		copy(out[row*W:(row+1)*W], x[n*W:(n+1)*W])
	}
	return out
}

// expandMerged returns a merger's output over the units run ([len(units), O]) as the page's
// [S/m^2, O] in the blocks' unit order, the others 0.
func (d *rowSubset) expandMerged(x []float32, O, units int) []float32 {
	out := make([]float32, units*O)
	for n, u := range d.units {
		copy(out[u*O:(u+1)*O], x[n*O:(n+1)*O])
	}
	return out
}

// compact makes the graph run on the page rows kept (the blocks' order, increasing) from
// here: the hidden state h (the page's, [S, D]) and the rope tables (ropes(hd, theta))
// gathered onto the first rows of their buffers; the views give the segments over them.
func (g *graph) compact(kept []int, h []float32, ropes func(hd int, theta float64) ([]float32, []float32)) {
	hd := g.cfg.HeadDim()
	cos, sin := ropes(hd, g.cfg.RopeTheta)
	g.held = kept
	g.uploadHidden(h)
	g.be.Upload(v(g.buf.cos), gatherRows(cos, hd, kept))
	g.be.Upload(v(g.buf.sin), gatherRows(sin, hd, kept))
	g.seq = len(kept)
	g.tileRows = min(g.tileRows, g.seq)
}

// uploadHidden makes the hidden state the page's h ([S, D]): the rows the graph holds (all of
// them, or after a compaction the kept ones, gathered).
func (g *graph) uploadHidden(h []float32) {
	if g.held != nil {
		h = gatherRows(h, g.cfg.Hidden, g.held)
	}
	g.be.Upload(v(g.buf.h), h)
}

// gatherRows is x's rows ([n, W]) listed in rows, in that order.
func gatherRows(x []float32, W int, rows []int) []float32 {
	out := make([]float32, len(rows)*W)
	for n, r := range rows {
		copy(out[n*W:(n+1)*W], x[r*W:(r+1)*W])
	}
	return out
}
