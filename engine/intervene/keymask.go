package intervene

// keymask.go: masking patches as keys, an intervention (issue 22): from a chosen block on,
// chosen patches are removed from attention as keys — no query attends to them, as
// transformers' eager attention does with an additive -inf mask on their columns — while
// they stay in the sequence as queries and pass through every block and the merger.
//
// How: the mask shapes the run's views (geom.Views.MaskKeys) and has no hook: in each masked
// block the graph gathers, after rope, the kept rows' q|k|v into its keys buffer (host work on
// any backend, no kernel of its own) and Attention gets each segment with its key range there
// (backend.Segment.KeyStart/KeyEnd: every CPU path and the Metal kernels take it). The probes
// read the same views: a masked key has probability 0 in every map, rollout and statistic of
// those blocks.
//
// Invariant: the patches are named as Mask names them (processor order, or a rectangle of the
// first image) and mapped to the blocks' row order once (Qwen2.5-VL's windows), every block
// before Block runs bit for bit as without the mask, and a segment that would keep no key is
// refused before anything runs (softmax over nothing is NaN in transformers).
// Mutation that would silently break it: gathering the kept rows of the processor's order on
// a window-ordered page — other patches would be masked, the maps still plausible
// (TestKeyMaskParity runs Qwen2.5-VL's tower); or masking from block Block+1 (the fixture masks
// from block 1 and block 1's output would move).

import (
	"fmt"
	"strconv"
	"strings"
)

// KeyMask is the patches no query attends to from block Block on. The zero value masks
// nothing. Comparable, so Settings stays comparable.
type KeyMask struct {
	Patches Mask // Mask's forms: "rect:x0,y0,x1,y1" or "rows:R,R,..."
	Block   int  // the first block whose attention goes without them
}

// None says whether the key mask masks nothing.
func (k KeyMask) None() bool { return k.Patches.None() }

// Spec is the key mask as the CLI takes it: "x0,y0,x1,y1@B" or "rows:R,...@B" ("" none).
func (k KeyMask) Spec() string {
	if k.None() {
		return ""
	}
	return strings.TrimPrefix(string(k.Patches), "rect:") + "@" + strconv.Itoa(k.Block)
}

// String names it in settings and captions: "mask keys 2,2,5,5 from block 3" ("" none).
func (k KeyMask) String() string {
	if k.None() {
		return ""
	}
	return fmt.Sprintf("mask keys %s from block %d", strings.TrimPrefix(strings.TrimPrefix(string(k.Patches), "rect:"), "rows:"), k.Block)
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
	return KeyMask{Patches: m, Block: from}, nil
}

// Name is how settings and captions name it (Intervention).
func (k KeyMask) Name() string { return k.String() }

// Effect says what it does (Intervention).
func (k KeyMask) Effect() string {
	return "no query attends to those patches from that block on (they stay as queries)"
}

// From is the first block whose attention goes without the keys (Intervention).
func (k KeyMask) From() int { return k.Block }

// Plan lays the key mask out on the page's views (Intervention), refusing a block outside
// the tower and a segment (an image, a frame, a window) left with no key: the graph gathers
// the kept keys and every probe scores them (geom.View.Keys). No hook.
func (k KeyMask) Plan(t Tower) (any, error) {
	if k.None() {
		return nil, nil
	}
	if k.Block >= t.Depth {
		return nil, fmt.Errorf("key mask from block %d: the tower has blocks 0-%d", k.Block, t.Depth-1)
	}
	rows, err := k.Patches.Rows(t.Layout)
	if err != nil {
		return nil, fmt.Errorf("key %v", err)
	}
	masked := make([]bool, t.Layout.Rows())
	for _, r := range rows {
		masked[t.Layout.RowOfProcessor(r)] = true
	}
	return nil, t.Views.MaskKeys(k.Block, masked, "key mask "+k.Spec())
}
