package guard

// nonfinite.go: when a value stops being a number. A NaN or Inf weight, or a preprocessor
// std of 1e-45, makes every later block NaN; the run names the first place it happened —
// the embedding, or a block and the op in it — and the weights of that op that are not
// finite, so the user knows which file and tensor to look at. This file holds what is said
// and the checks; the run's diagnosis (re-running a block from its input) is the engine's.
//
// Invariant: a value is finite only when it is neither a NaN nor an Inf, and a weight is
// judged on its values widened exactly to float32 (a bf16 or f16 Inf stays an Inf); a weight
// the family has not (nil Region) is never named. Mutation that would silently break it:
// testing for NaN only — an Inf weight (a merger's fc1 bias) would pass as finite and the
// report would name no weight (TestNonFiniteMergerNamed).

import (
	"fmt"
	"math"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// NonFinite is where the first NaN or Inf of a run appeared.
type NonFinite struct {
	Block   int      `json:"block"`             // -1: the embedding; a merger's: the block it ran after
	Merger  string   `json:"merger,omitempty"`  // a merger's output: its weights' prefix ("merger.", "deepstack_merger_list.0.")
	Tap     string   `json:"tap,omitempty"`     // the first intermediate that is not finite
	Op      string   `json:"op"`                // what made it
	Weights []string `json:"weights,omitempty"` // that op's weights holding NaN or Inf
}

func (n *NonFinite) String() string {
	where := "the embedding"
	switch {
	case n.Merger != "":
		where = n.Op
	case n.Block >= 0:
		where = fmt.Sprintf("block %d, %s", n.Block, n.Op)
	}
	s := "values stopped being finite (NaN or Inf) in " + where
	if n.Block < 0 {
		s += " (" + n.Op + ")"
	}
	if len(n.Weights) > 0 {
		s += fmt.Sprintf("; not finite in the weights %v", n.Weights)
	}
	if n.Merger != "" {
		return s + "; the blocks' outputs are finite"
	}
	return s + "; every later value depends on it"
}

// Finite says whether every value of xs is a number (no NaN, no Inf).
func Finite(xs []float32) bool {
	for _, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// NonFiniteWeights names the weights among ws that hold a NaN or Inf (a weight the family
// has not, nil Region, is skipped).
func NonFiniteWeights(ws ...backend.Weight) []string {
	var bad []string
	for _, w := range ws {
		if w.Region != nil && !Finite(widened(w)) {
			bad = append(bad, w.Name)
		}
	}
	return bad
}

// widened is w's values as float32.
func widened(w backend.Weight) []float32 {
	out := make([]float32, w.Elems())
	dtype.DecodeF32(out, w.Bytes(), w.DType)
	return out
}
