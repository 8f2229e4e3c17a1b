package engine

// patch.go: activation patching, an intervention (issue 22): one block's output at chosen
// patches is replaced by another run's output there (another image through the same tower,
// the same page shape), and the run goes on from the patched state: how far the change
// travels through the later blocks and into the merger.
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

// ParsePatchFrom reads the setting "IMAGE:blocks.B.out@PATCHES" (PATCHES: x0,y0,x1,y1, or
// rows:R,R,...; the Mask forms) into its parts, and canonicalizes it.
func ParsePatchFrom(spec string) (canonical, image string, block int, patches Mask, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", "", 0, "", nil
	}
	i := strings.LastIndex(spec, ":blocks.")
	at := strings.LastIndex(spec, "@")
	if i <= 0 || at < i {
		return "", "", 0, "", fmt.Errorf("patch-from %q: want IMAGE:blocks.B.out@x0,y0,x1,y1 (or @rows:R,R,...)", spec)
	}
	image = spec[:i]
	tap := spec[i+1 : at]
	b, ok := strings.CutPrefix(tap, "blocks.")
	b, ok2 := strings.CutSuffix(b, ".out")
	if block, err = strconv.Atoi(b); !ok || !ok2 || err != nil || block < 0 {
		return "", "", 0, "", fmt.Errorf("patch-from %q: the tap is blocks.B.out (a block's output; the only tap patched so far)", spec)
	}
	if patches, err = ParseMask(spec[at+1:]); err != nil || patches.None() {
		return "", "", 0, "", fmt.Errorf("patch-from %q: the patches: %v", spec, err)
	}
	return fmt.Sprintf("%s:blocks.%d.out@%s", image, block, strings.TrimPrefix(string(patches), "rect:")), image, block, patches, nil
}

// sessionPatch is a session's activation patch: the source image's block output at rows,
// applied to every run of the session (patchFrom computes it once).
type sessionPatch struct {
	block  int
	rows   []int
	source []float32
}

// patchFrom makes the session's patch from its PatchFrom setting: the image is made into a
// page as the session's was (the same processor settings), must give the same page, and runs
// to the block on the session's engine (with the session's ablation and mask).
func (s *Session) patchFrom(spec string) error {
	_, image, block, patches, err := ParsePatchFrom(spec)
	if err != nil || image == "" {
		return err
	}
	if block >= s.Checkpoint.Config.Depth {
		return fmt.Errorf("patch-from blocks.%d.out: the tower has blocks 0..%d", block, s.Checkpoint.Config.Depth-1)
	}
	src, err := loadPage(s.Checkpoint, image, s.Settings)
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
	for run.Next() <= block {
		if _, err := run.Step(context.Background()); err != nil {
			return fmt.Errorf("%s: %w", image, err)
		}
	}
	s.patch = &sessionPatch{block: block, rows: rows, source: run.Hidden()}
	return s.Run.PatchOutput(block, rows, s.patch.source)
}
