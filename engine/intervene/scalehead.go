package intervene

// scalehead.go: scaling heads, an intervention (issue 38; the seam's first new tenant): head H
// of block B times a factor F where its output enters proj — the control that dampens or
// amplifies a head instead of removing it (F = 0 is the zero ablation, F = 1 the plain tower).
// What transformers gives with a forward pre-hook on attn.proj that multiplies the head's
// columns by F (make_fixtures.py scalehead).
//
// How: a ProjHook; attn comes down to the host, the heads' columns are multiplied in float32
// (one rounding, as torch's x * f), and go back up (host work on any backend, as a head patch).
//
// Invariant: only the listed heads' columns change, each by one float32 multiplication, and
// every block before the first listed runs bit for bit as without it.
// Mutation that would silently break it: scaling the heads of q (before attention) instead of
// what proj reads — a fluent, wrong tower (TestScaleHeadParity, against transformers).

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ScaleHeads is the heads a run scales and by how much: "1:2=0.5,2:0=1.5" (BLOCK:HEAD=FACTOR,
// comma- or +-separated), canonical as ParseScaleHeads gives it; "" none. A string, so Settings
// stays comparable and prints as typed.
type ScaleHeads string

// headScale is one head's factor.
type headScale struct {
	block, head int
	factor      float32
}

// ParseScaleHeads checks the setting's syntax (the tower's ranges: Plan) and returns it in
// canonical form, sorted by block and head.
func ParseScaleHeads(s string) (ScaleHeads, error) {
	hs, err := parseScales(s)
	if err != nil || len(hs) == 0 {
		return "", err
	}
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%d:%d=%s", h.block, h.head, strconv.FormatFloat(float64(h.factor), 'g', -1, 32))
	}
	return ScaleHeads(strings.Join(parts, ",")), nil
}

func parseScales(s string) ([]headScale, error) {
	var out []headScale
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' }) {
		item = strings.TrimSpace(item)
		bh, f, ok1 := strings.Cut(item, "=")
		b, h, ok2 := strings.Cut(bh, ":")
		block, err1 := strconv.Atoi(strings.TrimSpace(b))
		head, err2 := strconv.Atoi(strings.TrimSpace(h))
		factor, err3 := strconv.ParseFloat(strings.TrimSpace(f), 32)
		switch {
		case !ok1 || !ok2 || err1 != nil || err2 != nil || block < 0 || head < 0:
			return nil, fmt.Errorf("scale head %s: want BLOCK:HEAD=FACTOR, e.g. 1:2=0.5 (comma-separated)", QuoteShort(item))
		case err3 != nil || math.IsInf(factor, 0) || math.IsNaN(factor):
			return nil, fmt.Errorf("scale head %s: the factor is a finite number, e.g. 0.5 or 1.5", QuoteShort(item))
		}
		hs := headScale{block, head, float32(factor)}
		if slices.ContainsFunc(out, func(o headScale) bool { return o.block == block && o.head == head }) {
			return nil, fmt.Errorf("scale head %d:%d: given twice", block, head)
		}
		out = append(out, hs)
	}
	if strings.TrimSpace(s) != "" && len(out) == 0 {
		return nil, fmt.Errorf("scale head %s: no BLOCK:HEAD=FACTOR (want e.g. 1:2=0.5)", QuoteShort(s))
	}
	slices.SortFunc(out, func(a, b headScale) int {
		if a.block != b.block {
			return a.block - b.block
		}
		return a.head - b.head
	})
	return out, nil
}

// None says whether it scales nothing.
func (s ScaleHeads) None() bool { return strings.TrimSpace(string(s)) == "" }

// Name is how settings and captions name it (Intervention): "scale heads 1:2=0.5".
func (s ScaleHeads) Name() string {
	if s.None() {
		return ""
	}
	return "scale heads " + string(s)
}

// Effect says what it does (Intervention).
func (s ScaleHeads) Effect() string {
	return "each head's output multiplied by its factor where it enters proj"
}

// From is the first block it scales (Intervention).
func (s ScaleHeads) From() int {
	hs, err := parseScales(string(s))
	if err != nil || len(hs) == 0 {
		return 0
	}
	return hs[0].block
}

// Plan checks the heads against the tower (Intervention); the hook scales them before proj.
func (s ScaleHeads) Plan(t Tower) (any, error) {
	hs, err := parseScales(string(s))
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	for _, h := range hs {
		switch {
		case h.block >= t.Depth:
			return nil, fmt.Errorf("scale head %d:%d: the tower has blocks 0..%d", h.block, h.head, t.Depth-1)
		case h.head >= t.Heads:
			return nil, fmt.Errorf("scale head %d:%d: the tower has heads 0..%d", h.block, h.head, t.Heads-1)
		}
	}
	return scaleHook(hs), nil
}

// HostFloats is the hook's copy of attn, [S, D] (HostMemory).
func (s ScaleHeads) HostFloats(patches, hidden int) int64 {
	if s.None() {
		return 0
	}
	return int64(patches) * int64(hidden)
}

// scaleHook is the heads' factors, sorted by block.
type scaleHook []headScale

// BeforeProj multiplies block s.Block's listed heads' columns of attn by their factors.
func (hs scaleHook) BeforeProj(s ProjSite) {
	var mine []headScale
	for _, h := range hs {
		if h.block == s.Block {
			mine = append(mine, h)
		}
	}
	if len(mine) == 0 {
		return
	}
	attn := make([]float32, s.Rows*s.Hidden)
	s.Backend.Download(attn, s.Attn)
	for r := range s.Rows {
		row := attn[r*s.Hidden : (r+1)*s.Hidden]
		for _, h := range mine {
			for c := h.head * s.HeadDim; c < (h.head+1)*s.HeadDim; c++ {
				row[c] *= h.factor // one float32 rounding, as torch's x * f
			}
		}
	}
	s.Backend.Upload(s.Attn, attn)
}
