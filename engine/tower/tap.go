package tower

// tap.go: the named intermediates of a block ("taps", as llama.cpp's qwen3vl graph names
// ln1, Qcur, attn_out, ffn_inp, ...): one fixed list with each tap's name, what it is and its
// width, for the flags, the window, the dump and the docs. The graph names each tap once,
// where the op that makes it has run (graph.go: g.name, g.nameTile); a run keeps the taps
// asked for (Keep) in its probe.Store, by these names.
//
// Invariant: a kept tap holds the values of the op the graph names it after, read before
// anything overwrites them: a tap named by g.name is read when its pass has committed and
// nothing later in that pass writes its rows; ffn_act is read tile by tile, before the next
// tile overwrites the tile buffer. Mutation that would silently break it: reading the MLP
// pass's taps after the deepstack merger, which writes buf.ln — ln2 of a deepstack block
// would be the merger's LayerNorm, the same shape, finite and plausible.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/model"
)

// Tap is one named intermediate of a block.
type Tap uint8

// The taps of a block, in graph order.
const (
	TapLN1      Tap = iota // LayerNorm1(h): the attention's input
	TapQ                   // q after rope: qkv's first third
	TapK                   // k after rope: qkv's second third
	TapV                   // v: qkv's last third (never roped)
	TapAttn                // attention output, heads concatenated, before proj
	TapAttnProj            // proj(attn), before the residual add
	TapFFNIn               // h after the attention residual: the MLP half's input
	TapLN2                 // LayerNorm2(ffn_in): the MLP's input
	TapFFNAct              // gelu_tanh(fc1(ln2)), the [S, I] hidden layer of the MLP
	TapFFNOut              // fc2(ffn_act), before the residual add
	TapOut                 // the block output: ffn_in + ffn_out
	numTaps
)

type tapInfo struct {
	name, about string
	wide        bool // I wide (the MLP's hidden layer) instead of D
}

var tapInfos = [numTaps]tapInfo{
	TapLN1:      {"ln1", "LayerNorm1 of the block input (the attention's input)", false},
	TapQ:        {"q", "query after rope (qkv's first third)", false},
	TapK:        {"k", "key after rope (qkv's second third)", false},
	TapV:        {"v", "value (qkv's last third, not roped)", false},
	TapAttn:     {"attn", "attention output, heads concatenated, before proj", false},
	TapAttnProj: {"attn_proj", "proj of the attention output, before the residual", false},
	TapFFNIn:    {"ffn_in", "input + attn_proj: the hidden state after the attention half", false},
	TapLN2:      {"ln2", "LayerNorm2 of ffn_in (the MLP's input)", false},
	TapFFNAct:   {"ffn_act", "gelu_tanh(fc1(ln2)): the MLP's hidden layer, I wide", true},
	TapFFNOut:   {"ffn_out", "fc2(ffn_act), before the residual", false},
	TapOut:      {"out", "the block output: ffn_in + ffn_out", false},
}

// Taps lists every tap in graph order.
func Taps() []Tap {
	out := make([]Tap, numTaps)
	for i := range out {
		out[i] = Tap(i)
	}
	return out
}

// TapNames are the taps' names in graph order.
func TapNames() []string {
	names := make([]string, numTaps)
	for i, t := range Taps() {
		names[i] = t.String()
	}
	return names
}

func (t Tap) String() string {
	if t >= numTaps {
		return fmt.Sprintf("tap(%d)", t)
	}
	return tapInfos[t].name
}

// About says what the tap is, in a few words.
func (t Tap) About() string { return tapInfos[t].about }

// Width is the tap's values per patch: I for ffn_act, D for the others.
func (t Tap) Width(c model.Config) int {
	if tapInfos[t].wide {
		return c.Intermediate
	}
	return c.Hidden
}

// ParseTap is the tap named name; an unknown name is an error listing the known ones.
func ParseTap(name string) (Tap, error) {
	if i := slices.Index(TapNames(), name); i >= 0 {
		return Tap(i), nil
	}
	return 0, fmt.Errorf("unknown tap %s: the taps are %s (or all)", intervene.QuoteShort(name), strings.Join(TapNames(), ", "))
}

// TapSet is a set of taps.
type TapSet uint16

// AllTaps is every tap.
const AllTaps = TapSet(1<<numTaps - 1)

// ProbeTaps are what the window's probes read: the block output (activations, Compare) and
// q and k (attention maps, rollout).
var ProbeTaps = TapSetOf(TapOut, TapQ, TapK)

// TapSetOf is the set of ts.
func TapSetOf(ts ...Tap) TapSet {
	var s TapSet
	for _, t := range ts {
		s |= 1 << t
	}
	return s
}

// Has says whether t is in s.
func (s TapSet) Has(t Tap) bool { return s&(1<<t) != 0 }

// List is s's taps in graph order.
func (s TapSet) List() []Tap {
	var out []Tap
	for _, t := range Taps() {
		if s.Has(t) {
			out = append(out, t)
		}
	}
	return out
}

// String is s's names in graph order, comma-separated ("" for none): ParseTaps reads it.
func (s TapSet) String() string {
	names := make([]string, 0, numTaps)
	for _, t := range s.List() {
		names = append(names, t.String())
	}
	return strings.Join(names, ",")
}

// ParseTaps reads a comma-separated list of tap names, or "all"; "" is no tap.
func ParseTaps(list string) (TapSet, error) {
	if strings.TrimSpace(list) == "all" {
		return AllTaps, nil
	}
	var s TapSet
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		t, err := ParseTap(name)
		if err != nil {
			return 0, err
		}
		s |= TapSetOf(t)
	}
	return s, nil
}

// withPairs adds k to q and q to k: the run keeps them together, as one q|k [S, 2D] (the
// attention probes score q against k).
func (s TapSet) withPairs() TapSet {
	if s.Has(TapQ) || s.Has(TapK) {
		s |= TapSetOf(TapQ, TapK)
	}
	return s
}

// TapBytes is what keeping tap t of every block of c costs on the host for a page of patches
// (float32).
func TapBytes(c model.Config, t Tap, patches int) int64 {
	return int64(patches) * int64(t.Width(c)) * 4 * int64(c.Depth)
}

// ProbeBytes is what a run of c keeping taps costs on the host for a page of patches: every
// block's value of each tap, float32 (q and k count both when either is asked: they are
// kept together).
func ProbeBytes(c model.Config, patches int, taps TapSet) int64 {
	var n int64
	for _, t := range taps.withPairs().List() {
		n += TapBytes(c, t, patches)
	}
	return n
}
