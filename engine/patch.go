package engine

// patch.go: activation patching, an intervention (issue 22): one block's output (or one head's
// slice of what the block's proj reads) at chosen patches is replaced by another run's there
// (another image through the same tower, the same page shape), and the run goes on from the
// patched state: how far the change travels through the later blocks and into the merger.
//
// Invariant: the replaced rows are the source run's block output at the same patches, taken
// in the blocks' row order (both runs share the layout), and everything after the block
// (the kept output, the statistics, the deepstack merger, the next block) sees the patched
// state, as transformers' forward hook on the block gives it.
// Mutation that would silently break it: patching after the deepstack merger has read the
// block's output (Qwen3-VL): the deepstack feature would miss the patch
// (TestActivationPatchParity compares the deepstack outputs too).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// outputPatch is one block's patch: rows (in the blocks' order) and the source's [S, D].
type outputPatch struct {
	rows   []int
	source []float32
}

// PatchOutput makes block's output take source's rows at the patches rows (pixel_values
// rows); source is another run's output of the same block, [S, D] in the blocks' row order
// (Probes.Output, or Hidden right after the block). Before the block runs.
func (r *Run) PatchOutput(block int, rows []int, source []float32) error {
	c := r.Config()
	S, D := r.Layout.Rows(), c.Hidden
	switch {
	case block < r.next || block >= c.Depth:
		return fmt.Errorf("patch block %d: the run is at block %d of %d (a block not yet run)", block, r.next, c.Depth)
	case len(source) != S*D:
		return fmt.Errorf("patch block %d: the source holds %d values, the page %d rows of %d", block, len(source), S, D)
	}
	if err := r.patchableWithDrop(block); err != nil {
		return err
	}
	p := outputPatch{source: source}
	for _, row := range rows {
		if row < 0 || row >= S {
			return fmt.Errorf("patch row %d: the page has %d patches (0-%d)", row, S, S-1)
		}
		p.rows = append(p.rows, r.Layout.RowOfProcessor(row))
	}
	if r.patches == nil {
		r.patches = map[int]outputPatch{}
	}
	r.patches[block] = p
	return nil
}

// applyPatch writes block i's patch (if any) into the block's output, on the host (r.cur, the
// kept output) and in the backend's hidden state.
func (r *Run) applyPatch(i int) {
	p, ok := r.patches[i]
	if !ok {
		return
	}
	D := r.Config().Hidden
	for _, row := range p.rows {
		copy(r.cur[row*D:(row+1)*D], p.source[row*D:(row+1)*D])
	}
	r.e.Backend.Upload(v(r.g.buf.h), r.cur)
}

// patchableWithDrop refuses a patch of a block that runs after a token drop (its rows are
// compacted; patching them is not supported).
func (r *Run) patchableWithDrop(block int) error {
	if k := r.e.Settings.KeepTop; !k.None() && block > k.After {
		return fmt.Errorf("patch block %d: the run drops tokens after block %d (%s); patch a block up to %d", block, k.After, k.String(), k.After)
	}
	return nil
}

// headEdit is one block's edit of attn where the heads enter proj, after any ablation: this
// run's attn handed to capture (a head patch's source run), and/or head columns [c0, c1) at
// rows (the blocks' order) taken from source ([S, D], another run's attn of the block).
type headEdit struct {
	capture func(attn []float32)
	rows    []int
	c0, c1  int
	source  []float32
}

// editHeads applies block i's head edit (if any) on the host: attn down, captured or
// patched, and back.
func (g *graph) editHeads(i int) {
	e := g.heads[i]
	if e == nil {
		return
	}
	D := g.cfg.Hidden
	attn := make([]float32, g.seq*D)
	g.be.Download(attn, v(g.buf.attn))
	if e.capture != nil {
		e.capture(attn)
	}
	if e.source == nil {
		return
	}
	for _, r := range e.rows {
		copy(attn[r*D+e.c0:r*D+e.c1], e.source[r*D+e.c0:r*D+e.c1])
	}
	g.be.Upload(v(g.buf.attn), attn)
}

// headEdit is block's head edit, made if there is none yet.
func (r *Run) headEdit(block int) *headEdit {
	if r.g.heads == nil {
		r.g.heads = map[int]*headEdit{}
	}
	if r.g.heads[block] == nil {
		r.g.heads[block] = &headEdit{}
	}
	return r.g.heads[block]
}

// CaptureAttn hands block's attn (what proj reads: [S, D] in the blocks' row order, after any
// ablation) to f when the block runs: the source of a head patch. Before the block runs.
func (r *Run) CaptureAttn(block int, f func(attn []float32)) {
	r.headEdit(block).capture = f
}

// PatchHead makes block's attn take source's values in head's columns at the patches rows
// (pixel_values rows) before proj reads it; source is another run's attn of the block, [S, D]
// in the blocks' row order (CaptureAttn). Before the block runs.
func (r *Run) PatchHead(block, head int, rows []int, source []float32) error {
	c := r.Config()
	S, D, hd := r.Layout.Rows(), c.Hidden, c.HeadDim()
	switch {
	case block < r.next || block >= c.Depth:
		return fmt.Errorf("patch block %d: the run is at block %d of %d (a block not yet run)", block, r.next, c.Depth)
	case head < 0 || head >= c.Heads:
		return fmt.Errorf("patch head %d: block %d has heads 0-%d", head, block, c.Heads-1)
	case len(source) != S*D:
		return fmt.Errorf("patch block %d: the source holds %d values, the page %d rows of %d", block, len(source), S, D)
	}
	if err := r.patchableWithDrop(block); err != nil {
		return err
	}
	var lrows []int
	for _, row := range rows {
		if row < 0 || row >= S {
			return fmt.Errorf("patch row %d: the page has %d patches (0-%d)", row, S, S-1)
		}
		lrows = append(lrows, r.Layout.RowOfProcessor(row))
	}
	e := r.headEdit(block)
	e.rows, e.c0, e.c1, e.source = lrows, head*hd, (head+1)*hd, source
	return nil
}

// ParsePatchFrom reads the setting "IMAGE:blocks.B.out@PATCHES" (a block's output) or
// "IMAGE:blocks.B.attn.hH@PATCHES" (head H's slice of what the block's proj reads; PATCHES:
// x0,y0,x1,y1, or rows:R,R,...; the Mask forms) into its parts (head -1 for a block's
// output), and canonicalizes it.
func ParsePatchFrom(spec string) (canonical, image string, block, head int, patches Mask, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", "", 0, -1, "", nil
	}
	i := strings.LastIndex(spec, ":blocks.")
	at := strings.LastIndex(spec, "@")
	if i <= 0 || at < i {
		return "", "", 0, -1, "", fmt.Errorf("patch-from %s: want IMAGE:blocks.B.out@x0,y0,x1,y1 or IMAGE:blocks.B.attn.hH@… (or @rows:R,R,...)", QuoteShort(spec))
	}
	image = spec[:i]
	b, _ := strings.CutPrefix(spec[i+1:at], "blocks.")
	bad := fmt.Errorf("patch-from %s: the tap is blocks.B.out (a block's output) or blocks.B.attn.hH (head H of what proj reads)", QuoteShort(spec))
	b, tap, _ := strings.Cut(b, ".")
	if block, err = strconv.Atoi(b); err != nil || block < 0 {
		return "", "", 0, -1, "", bad
	}
	head, what := -1, "out"
	if tap != "out" {
		h, ok := strings.CutPrefix(tap, "attn.h")
		if head, err = strconv.Atoi(h); !ok || err != nil || head < 0 {
			return "", "", 0, -1, "", bad
		}
		what = "attn.h" + strconv.Itoa(head)
	}
	if patches, err = ParseMask(spec[at+1:]); err != nil {
		return "", "", 0, -1, "", fmt.Errorf("patch-from %s: the patches: %v", QuoteShort(spec), err)
	}
	if patches.None() {
		return "", "", 0, -1, "", fmt.Errorf("patch-from %s: no patches after @: want x0,y0,x1,y1 or rows:R,R,...", QuoteShort(spec))
	}
	return fmt.Sprintf("%s:blocks.%d.%s@%s", image, block, what, strings.TrimPrefix(string(patches), "rect:")), image, block, head, patches, nil
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
	rows, err := patches.rows(s.Run.Layout)
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
