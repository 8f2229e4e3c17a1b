package engine

// tokendrop.go: dropping tokens, an intervention (issue 22; visual-token pruning as FastV- and
// ToMe-style studies do it): after block After, only K merged tokens (merge units of m x m
// patches, the rows the merger makes one token of) go on: the K that received the most
// attention in block After (probe.Store.Received: the head-mean attention summed over the
// queries of their segment, summed over the unit's patches; ties to the lower unit), or K
// chosen at random (seeded by the page: the control). The later blocks, their deepstack
// mergers and the final merger run on the kept rows only, compacted, so they cost what K
// tokens cost.
//
// What a run shows stays page-shaped: a later block's kept taps are expanded back to the page
// (a dropped row's output is its output after block After, unchanged, as its state is; its
// other taps and its q|k are 0), the mergers' dropped tokens are 0 rows, and the probes know
// the dropped rows (probe.Store.DropAfter): no query sees them, they attend to nothing.
//
// Invariant: keeping every token changes no bit (the compaction is then the identity);
// transformers with the same rows gathered before block After+1 (its hidden state, rope and
// cu_seqlens) agrees within 1e-5 (TestTokenDropParity).
// Mutation that would silently break it: compacting the hidden state but not the rope tables:
// every kept patch would be rotated as another patch's position, the maps still plausible.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
)

// KeepTop is a token drop: after block After only K merged tokens go on, the most attended
// (or, with Random, K at random). The zero value drops nothing. Comparable.
type KeepTop struct {
	K      int  // merged tokens kept (merge units of the page; each m x m patches)
	After  int  // the last block that runs every token
	Random bool // K chosen at random (seeded by the page size): the control
}

// None says whether the token drop keeps everything.
func (k KeepTop) None() bool { return k.K == 0 }

// Spec is the drop as the CLI takes it: "K@B", or "random:K@B" ("" none).
func (k KeepTop) Spec() string {
	if k.None() {
		return ""
	}
	s := fmt.Sprintf("%d@%d", k.K, k.After)
	if k.Random {
		s = "random:" + s
	}
	return s
}

// String names it in settings and captions: "keep the top 64 tokens after block 3".
func (k KeepTop) String() string {
	switch {
	case k.None():
		return ""
	case k.Random:
		return fmt.Sprintf("keep %d random tokens after block %d", k.K, k.After)
	}
	return fmt.Sprintf("keep the top %d tokens after block %d", k.K, k.After)
}

// ParseKeepTop reads "K@B" (the K most attended merged tokens in block B go on) or
// "random:K@B" (K at random).
func ParseKeepTop(s string) (KeepTop, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return KeepTop{}, nil
	}
	rest, random := strings.CutPrefix(s, "random:")
	k, b, ok := strings.Cut(rest, "@")
	n, err1 := strconv.Atoi(strings.TrimSpace(k))
	after, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || after < 0 {
		return KeepTop{}, fmt.Errorf("keep top %s: want K@BLOCK (the K most attended merged tokens in block BLOCK go on, e.g. 64@3), or random:K@BLOCK", QuoteShort(s))
	}
	return KeepTop{K: n, After: after, Random: random}, nil
}

// check refuses a drop the page and tower cannot run.
func (k KeepTop) check(units, depth int) error {
	switch {
	case k.None():
		return nil
	case k.After >= depth:
		return fmt.Errorf("keep top %s: the tower has blocks 0-%d", k.Spec(), depth-1)
	case k.K > units:
		return fmt.Errorf("keep top %s: the page has %d merged tokens", k.Spec(), units)
	}
	return nil
}

// tokenDrop is what a run dropped: the kept rows (the blocks' order, increasing, whole units)
// and the state the dropped rows keep.
type tokenDrop struct {
	after  int
	rows   []int     // kept rows of the page, in the blocks' order
	units  []int     // kept merge units, in the blocks' order: unit u is rows u*m*m .. (u+1)*m*m-1
	frozen []float32 // block after's output [S, D]: what a dropped row's output stays
}

// Dropped says which rows the run dropped after which block (nil rows, -1: none).
func (r *Run) Dropped() (after int, kept []int) {
	if r.drop == nil {
		return -1, nil
	}
	return r.drop.after, r.drop.rows
}

// KeptUnits is the merged tokens a token drop kept, in the merger's row order (the
// processor's), increasing; nil when the run dropped none.
func (r *Run) KeptUnits() []int64 {
	if r.drop == nil {
		return nil
	}
	m2 := r.Config().MergeSize * r.Config().MergeSize
	var out []int64
	for _, u := range r.drop.units {
		out = append(out, int64(r.Layout.ProcessorRow(u*m2)/m2))
	}
	slices.Sort(out)
	return out
}

// choose is the kept merge units (the blocks' order, increasing) of a page of units units:
// the K most attended by received (per row), ties to the lower unit, or K at random.
func (k KeepTop) choose(received []float64, m2, units int) []int {
	order := make([]int, units)
	for u := range order {
		order[u] = u
	}
	if k.Random {
		rand.New(rand.NewPCG(0x70d5, uint64(units))).Shuffle(units, func(i, j int) { order[i], order[j] = order[j], order[i] })
	} else {
		score := make([]float64, units)
		for u := range score {
			for _, x := range received[u*m2 : (u+1)*m2] {
				score[u] += x
			}
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case score[a] > score[b]:
				return -1
			case score[a] < score[b]:
				return 1
			}
			return 0
		})
	}
	kept := slices.Clone(order[:k.K])
	slices.Sort(kept)
	return kept
}

// dropTokens drops the tokens after block i when i is the drop's block: ranks the units,
// compacts the graph's state to the kept rows and tells the probes.
func (r *Run) dropTokens(ctx context.Context, i int) error {
	k := r.e.Settings.KeepTop
	if k.None() || i != k.After {
		return nil
	}
	c := r.Config()
	m2 := c.MergeSize * c.MergeSize
	S := r.Layout.Rows()
	var received []float64
	if !k.Random {
		qk, err := r.dropQK, error(nil) // taken for the ranking when the run keeps no q|k
		if qk == nil {
			qk, err = r.Probes.QK(i)
		}
		if err == nil {
			received, err = r.Probes.ReceivedOf(ctx, i, qk)
		}
		if err != nil {
			return err
		}
	}
	d := &tokenDrop{after: i, units: k.choose(received, m2, S/m2), frozen: r.cur}
	r.curOwn = false // the dropped rows' state is read from it for the rest of the run
	for _, u := range d.units {
		for j := range m2 {
			d.rows = append(d.rows, u*m2+j)
		}
	}
	if err := r.g.compact(d.rows, r.cur, r.Layout.RopeTables); err != nil {
		return err
	}
	dropped := make([]bool, S)
	for j := range dropped {
		dropped[j] = true
	}
	for _, row := range d.rows {
		dropped[row] = false
	}
	r.Probes.DropAfter(i, dropped)
	r.drop, r.dropQK = d, nil
	return nil
}

// expand returns x ([len(rows), W]: a later block's tap over the kept rows) on the page
// ([S, W]), the dropped rows from fill (nil: 0).
func (d *tokenDrop) expand(x []float32, W, S int, fill []float32) []float32 {
	out := make([]float32, S*W)
	if fill != nil {
		copy(out, fill)
	}
	for n, row := range d.rows {
		copy(out[row*W:(row+1)*W], x[n*W:(n+1)*W])
	}
	return out
}

// expandMerged returns a merger's output over the kept units ([len(units), O]) as the page's
// [S/m^2, O] in the blocks' unit order, the dropped tokens 0.
func (d *tokenDrop) expandMerged(x []float32, O, units int) []float32 {
	out := make([]float32, units*O)
	for n, u := range d.units {
		copy(out[u*O:(u+1)*O], x[n*O:(n+1)*O])
	}
	return out
}

// compact makes the graph run on the rows kept of the page (the blocks' order, increasing)
// from here: the hidden state h (the page's, [S, D]) and the rope tables (ropes(hd, theta))
// gathered onto the first rows of their buffers, the segments cut to the kept rows, the key
// mask laid out again over them.
func (g *graph) compact(kept []int, h []float32, ropes func(hd int, theta float64) ([]float32, []float32)) error {
	D, hd := g.cfg.Hidden, g.cfg.HeadDim()
	cos, sin := ropes(hd, g.cfg.RopeTheta)
	g.rows = kept
	g.uploadHidden(h)
	g.be.Upload(v(g.buf.cos), gatherRows(cos, hd, kept))
	g.be.Upload(v(g.buf.sin), gatherRows(sin, hd, kept))
	full := g.seq
	g.seq = len(kept)
	g.tileRows = min(g.tileRows, g.seq)
	isKept := make([]bool, full)
	for _, r := range kept {
		isKept[r] = true
	}
	before := countBefore(isKept) // before[r]: kept rows before page row r
	cut := func(segs []backend.Segment) []backend.Segment {
		var out []backend.Segment
		for _, sg := range segs {
			if n := (backend.Segment{Start: before[sg.Start], End: before[sg.End]}); n.Len() > 0 {
				out = append(out, n)
			}
		}
		return out
	}
	g.keptFrames, g.keptWindows = cut(g.lay.Segments), cut(g.lay.Windows())
	if g.keyMask != nil {
		masked := make([]bool, len(kept))
		for n, row := range kept {
			masked[n] = g.keyMask.masked[row]
		}
		p, err := planKeyMask(masked, g.keyMask.spec, g.keyMask.from, g.cfg.Depth, D, g.segmentsOf, g.lay.Windowed)
		if err != nil { // its rows are the kept rows' numbers: say so
			return fmt.Errorf("after the token drop (%d rows kept, numbered 0-%d): %w", len(kept), len(kept)-1, err)
		}
		g.keyMask = p
	}
	return nil
}

// segmentsOf is block i's attention segments over the rows the graph runs: the layout's, or,
// after a token drop, theirs cut to the kept rows (empty ones left out).
func (g *graph) segmentsOf(i int) []backend.Segment {
	switch {
	case g.rows == nil:
		return g.lay.SegmentsOf(i)
	case g.lay.Windowed(i):
		return g.keptWindows
	}
	return g.keptFrames
}

// countBefore is, for each row r and r = len(in), how many rows before r are in: a row range
// [a, b) holds countBefore[b] - countBefore[a] of them, numbered from countBefore[a] on.
func countBefore(in []bool) []int {
	before := make([]int, len(in)+1)
	for r, ok := range in {
		before[r+1] = before[r]
		if ok {
			before[r+1]++
		}
	}
	return before
}

// uploadHidden makes the hidden state the page's h ([S, D]): the rows the graph runs (all
// of them, or after a token drop the kept ones, gathered).
func (g *graph) uploadHidden(h []float32) {
	if g.rows != nil {
		h = gatherRows(h, g.cfg.Hidden, g.rows)
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
