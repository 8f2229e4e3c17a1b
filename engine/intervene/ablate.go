package intervene

// ablate.go: head ablation, the first intervention (issue 22): chosen attention heads of
// chosen blocks are zeroed, or replaced by their mean over the page's rows, where their
// output enters proj (what transformers does with a forward pre-hook on attn.proj).
//
// Invariant: an ablation changes nothing before its first block (the blocks before it run
// bit for bit as without it) and an empty one changes no bit anywhere; the kept tap attn is
// what proj reads, the ablated heads included.
// Mutation that would silently break it: the mean over each frame rather than the page (on a
// page of several images or a video, a head's mean would differ by frame): fluent and wrong
// (TestAblationParity's fixture has three grids).

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Ablation is the heads a run ablates and how. The zero value ablates nothing. Both fields are
// plain strings so Settings stays comparable and prints as typed.
type Ablation struct {
	Heads string // "3:5,7:*": BLOCK:HEAD pairs, * every head of the block; "" none
	Mode  string // "zero" (the default) or "mean": the head's mean over the page's rows
}

// Ablation modes.
const (
	AblateZero = "zero"
	AblateMean = "mean"
)

// None says whether the ablation ablates nothing.
func (a Ablation) None() bool { return strings.TrimSpace(a.Heads) == "" }

// String is how settings and captions name it: "ablate 3:5,7:* (zero)", or "" for none.
func (a Ablation) String() string {
	if a.None() {
		return ""
	}
	return fmt.Sprintf("ablate %s (%s)", a.Heads, a.mode())
}

// ModeOrZero is the ablation's mode, the default (zero) when none is set.
func (a Ablation) ModeOrZero() string { return a.mode() }

func (a Ablation) mode() string {
	if a.Mode == "" {
		return AblateZero
	}
	return a.Mode
}

// ParseAblation checks the flag values' syntax (not the tower's ranges: heads does that) and
// returns them in canonical form: pairs sorted by block and head, * for a whole block.
func ParseAblation(heads, mode string) (Ablation, error) {
	a := Ablation{Heads: strings.TrimSpace(heads), Mode: strings.TrimSpace(mode)}
	if a.Mode != "" && a.Mode != AblateZero && a.Mode != AblateMean {
		return Ablation{}, fmt.Errorf("ablation mode %s: want zero or mean", QuoteShort(a.Mode))
	}
	if a.None() {
		return Ablation{Mode: a.Mode}, nil
	}
	set, err := parseHeads(a.Heads)
	if err != nil {
		return Ablation{}, err
	}
	a.Heads = formatHeads(set)
	return a, nil
}

// parseHeads reads "3:5,7:*" (or "3:5+7:*", for compare's comma-separated settings) into
// block -> heads (-1: every head).
func parseHeads(s string) (map[int][]int, error) {
	set := map[int][]int{}
	if len(strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' || r == ' ' })) == 0 {
		return nil, fmt.Errorf("ablate %s: no BLOCK:HEAD pair (want e.g. 3:5 or 7:*, comma-separated)", QuoteShort(s))
	}
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' }) {
		pair = strings.TrimSpace(pair)
		b, h, ok := strings.Cut(pair, ":")
		block, err := strconv.Atoi(strings.TrimSpace(b))
		if !ok || err != nil || block < 0 {
			return nil, fmt.Errorf("ablate %s: want BLOCK:HEAD pairs such as 3:5 or 7:* (comma-separated)", QuoteShort(pair))
		}
		head := -1
		if h = strings.TrimSpace(h); h != "*" {
			if head, err = strconv.Atoi(h); err != nil || head < 0 {
				return nil, fmt.Errorf("ablate %s: the head is a number from 0, or * for every head of the block", QuoteShort(pair))
			}
		}
		if !slices.Contains(set[block], head) {
			set[block] = append(set[block], head)
		}
	}
	return set, nil
}

func formatHeads(set map[int][]int) string {
	var blocks []int
	for b := range set {
		blocks = append(blocks, b)
	}
	slices.Sort(blocks)
	var parts []string
	for _, b := range blocks {
		hs := slices.Sorted(slices.Values(set[b]))
		if hs[0] == -1 {
			parts = append(parts, fmt.Sprintf("%d:*", b))
			continue
		}
		for _, h := range hs {
			parts = append(parts, fmt.Sprintf("%d:%d", b, h))
		}
	}
	return strings.Join(parts, ",")
}

// heads is the ablation as [block][head] for a tower of depth blocks and H heads, refusing a
// block or head outside it; nil for none.
func (a Ablation) heads(depth, H int) ([][]bool, error) {
	if a.None() {
		return nil, nil
	}
	set, err := parseHeads(a.Heads)
	if err != nil {
		return nil, err
	}
	out := make([][]bool, depth)
	for b, hs := range set {
		if b >= depth {
			return nil, fmt.Errorf("ablate %d:…: the tower has blocks 0..%d", b, depth-1)
		}
		out[b] = make([]bool, H)
		for _, h := range hs {
			switch {
			case h == -1:
				for k := range out[b] {
					out[b][k] = true
				}
			case h >= H:
				return nil, fmt.Errorf("ablate %d:%d: the tower has heads 0..%d", b, h, H-1)
			default:
				out[b][h] = true
			}
		}
	}
	return out, nil
}

// Name is how settings and captions name it (Intervention).
func (a Ablation) Name() string { return a.String() }

// Effect says what it does (Intervention).
func (a Ablation) Effect() string { return "the heads' output replaced where it enters proj" }

// From is the first block it ablates (Intervention).
func (a Ablation) From() int {
	set, err := parseHeads(a.Heads)
	if a.None() || err != nil {
		return 0
	}
	return slices.Min(slices.Collect(maps.Keys(set)))
}

// Plan checks the heads against the tower (Intervention): the hook zeroes (or sets to their
// page mean) each block's ablated heads before proj.
func (a Ablation) Plan(t Tower) (any, error) {
	heads, err := a.heads(t.Depth, t.Heads)
	if err != nil || heads == nil {
		return nil, err
	}
	return &ablateHook{heads: heads, mean: a.mode() == AblateMean}, nil
}

// ablateHook is an ablation laid out on a tower: [block][head] ablated.
type ablateHook struct {
	heads [][]bool
	mean  bool
}

// BeforeProj applies block s.Block's ablation to attn, runs of consecutive heads at a time.
func (h *ablateHook) BeforeProj(s ProjSite) {
	if s.Block >= len(h.heads) || h.heads[s.Block] == nil {
		return
	}
	hs := h.heads[s.Block]
	for k := 0; k < len(hs); k++ {
		if !hs[k] {
			continue
		}
		k1 := k
		for k1+1 < len(hs) && hs[k1+1] {
			k1++
		}
		s.Backend.FillColumns(s.Attn, s.Rows, s.Hidden, k*s.HeadDim, (k1+1)*s.HeadDim, h.mean)
		k = k1
	}
}
