package engine

// keymask.go: masking patches as keys, an intervention (issue 22): from a chosen block on,
// chosen patches are removed from attention as keys — no query attends to them, as
// transformers' eager attention does with an additive -inf mask on their columns — while
// they stay in the sequence as queries and pass through every block and the merger.
//
// How: in each masked block, after rope, the kept rows' q|k|v are gathered on the host (down
// and up, as a head patch is: host work on any backend, no kernel of its own) into the keys
// buffer, segment by segment in row order, and Attention gets each segment with its key range
// there (backend.Segment.KeyStart/KeyEnd: every CPU path and the Metal kernels take it). The
// probes score the same keys (probe.Store.MaskKeys): a masked key has probability 0 in every
// map, rollout and statistic of those blocks.
//
// Invariant: the patches are named as Mask names them (processor order, or a rectangle of the
// first image) and mapped to the blocks' row order once (Qwen2.5-VL's windows), every block
// before From runs bit for bit as without the mask, and a segment that would keep no key is
// refused before anything runs (softmax over nothing is NaN in transformers).
// Mutation that would silently break it: gathering the kept rows of the processor's order on
// a window-ordered page — other patches would be masked, the maps still plausible
// (TestKeyMaskParity runs Qwen2.5-VL's tower); or masking from block From+1 (the fixture masks
// from block 1 and block 1's output would move).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
)

// KeyMask is the patches no query attends to from block From on. The zero value masks
// nothing. Comparable, so Settings stays comparable.
type KeyMask struct {
	Patches Mask // Mask's forms: "rect:x0,y0,x1,y1" or "rows:R,R,..."
	From    int  // the first block whose attention goes without them
}

// None says whether the key mask masks nothing.
func (k KeyMask) None() bool { return k.Patches.None() }

// Spec is the key mask as the CLI takes it: "x0,y0,x1,y1@B" or "rows:R,...@B" ("" none).
func (k KeyMask) Spec() string {
	if k.None() {
		return ""
	}
	return strings.TrimPrefix(string(k.Patches), "rect:") + "@" + strconv.Itoa(k.From)
}

// String names it in settings and captions: "mask keys 2,2,5,5 from block 3" ("" none).
func (k KeyMask) String() string {
	if k.None() {
		return ""
	}
	return fmt.Sprintf("mask keys %s from block %d", strings.TrimPrefix(strings.TrimPrefix(string(k.Patches), "rect:"), "rows:"), k.From)
}

// ParseKeyMask reads "PATCHES@B": PATCHES in Mask's forms (x0,y0,x1,y1, or rows:R,R,...), B the
// first block whose attention goes without them.
func ParseKeyMask(s string) (KeyMask, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return KeyMask{}, nil
	}
	patches, block, ok := strings.Cut(s, "@")
	from, err := strconv.Atoi(strings.TrimSpace(block))
	if !ok || err != nil || from < 0 {
		return KeyMask{}, fmt.Errorf("key mask %s: want PATCHES@BLOCK, e.g. 2,2,5,5@3 (patch columns 2-4, rows 2-4, from block 3) or rows:3,4,5@0", QuoteShort(s))
	}
	m, err := ParseMask(patches)
	if err != nil {
		return KeyMask{}, err
	}
	if m.None() {
		return KeyMask{}, fmt.Errorf("key mask %s: no patches before the @", QuoteShort(s))
	}
	return KeyMask{Patches: m, From: from}, nil
}

// keyMaskPlan is a run's key mask laid out over the rows the graph runs: the masked rows, and
// per masked block its segments with their key ranges in the keys buffer.
type keyMaskPlan struct {
	spec   string
	from   int
	masked []bool              // per row: no query attends to this row's key from block from on
	segs   [][]backend.Segment // [depth]: block i's segments with key ranges (nil before from)
	kept   []int               // the unmasked rows in row order: the keys buffer's rows
	host   []float32           // the gather's buffer, [rows, 3D]
}

// plan lays the key mask out on lay for a tower of depth blocks of hidden size D, refusing a
// block outside it and a segment (an image, a frame, a window) left with no key.
func (k KeyMask) plan(lay *geom.Layout, depth, D int) (*keyMaskPlan, error) {
	if k.None() {
		return nil, nil
	}
	if k.From >= depth {
		return nil, fmt.Errorf("key mask from block %d: the tower has blocks 0-%d", k.From, depth-1)
	}
	rows, err := k.Patches.rows(lay)
	if err != nil {
		return nil, fmt.Errorf("key %v", err)
	}
	masked := make([]bool, lay.Rows())
	for _, r := range rows {
		masked[lay.RowOfProcessor(r)] = true
	}
	return planKeyMask(masked, k.Spec(), k.From, depth, D, lay.SegmentsOf, lay.Windowed)
}

// planKeyMask lays out masked (per row of the rows the graph runs) from block from on, each
// block's segments given by segsOf (windowed says which are windows, for the error).
func planKeyMask(masked []bool, spec string, from, depth, D int, segsOf func(int) []backend.Segment, windowed func(int) bool) (*keyMaskPlan, error) {
	S := len(masked)
	p := &keyMaskPlan{spec: spec, from: from, masked: masked, segs: make([][]backend.Segment, depth), host: make([]float32, S*3*D)}
	unmasked := make([]bool, S)
	for r, m := range masked {
		if unmasked[r] = !m; !m {
			p.kept = append(p.kept, r)
		}
	}
	before := countBefore(unmasked) // a row range's keys are contiguous in the keys buffer
	for i := from; i < depth; i++ {
		for _, sg := range segsOf(i) {
			ks := backend.Segment{Start: sg.Start, End: sg.End, KeyStart: before[sg.Start], KeyEnd: before[sg.End]}
			if ks.KeyEnd == ks.KeyStart && sg.Len() > 0 {
				what := "image"
				if windowed(i) {
					what = "attention window"
				}
				return nil, fmt.Errorf("key mask %s: it masks every patch of the %s of rows %d-%d in block %d, whose queries would attend to nothing", spec, what, sg.Start, sg.End-1, i)
			}
			p.segs[i] = append(p.segs[i], ks)
		}
	}
	return p, nil
}

// keysOf is what block i's attention reads as keys: its own segments and k, v where it is
// not masked; else the kept rows' q|k|v gathered (after rope) into the keys buffer in row
// order, its k and v, and the segments with their key ranges there.
func (g *graph) keysOf(i int, k, val backend.View) ([]backend.Segment, backend.View, backend.View) {
	p := g.keyMask
	if p == nil || i < p.from {
		return g.segmentsOf(i), k, val
	}
	D := g.cfg.Hidden
	W := 3 * D
	g.be.Download(p.host, v(g.buf.qkv))
	for n, r := range p.kept { // n <= r: compacting in place never reads a row already overwritten
		copy(p.host[n*W:(n+1)*W], p.host[r*W:(r+1)*W])
	}
	g.be.Upload(v(g.buf.keys), p.host[:len(p.kept)*W])
	return p.segs[i], v(g.buf.keys).At(D), v(g.buf.keys).At(2 * D)
}
