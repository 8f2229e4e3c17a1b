package tower

// nonfinite.go: when a value stops being a number. A NaN or Inf weight, or a preprocessor
// std of 1e-45, makes every later block NaN; the run names the first place it happened —
// the embedding, or a block and the op in it — and the weights of that op that are not
// finite, so the user knows which file and tensor to look at (what is said, and the checks:
// engine/guard's NonFinite).
//
// Invariant: the diagnosis re-runs the block from its own input (kept on the host) with
// every intermediate read, and never changes what the run keeps or computes next: the block
// output is put back, the Store is not touched. Mutation that would silently break it:
// diagnosing from the block's output instead of its input — every intermediate would be
// NaN and the first op would always be blamed.

import (
	"context"
	"fmt"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/probe"
)

// producers names the op that makes each tap and the block weights it reads.
var producers = [numTaps]struct {
	op      string
	weights []int
}{
	TapLN1:      {"LayerNorm1 (norm1)", []int{wNorm1W, wNorm1B}},
	TapQ:        {"the qkv MatMul and rope", []int{wQKVW, wQKVB}},
	TapK:        {"the qkv MatMul and rope", []int{wQKVW, wQKVB}},
	TapV:        {"the qkv MatMul", []int{wQKVW, wQKVB}},
	TapAttn:     {"attention", nil},
	TapAttnProj: {"the attention's proj MatMul", []int{wProjW, wProjB}},
	TapFFNIn:    {"the attention residual", nil},
	TapLN2:      {"LayerNorm2 (norm2)", []int{wNorm2W, wNorm2B}},
	TapFFNAct:   {"fc1 and GELU", []int{wFC1W, wFC1B}},
	TapFFNOut:   {"the MLP's fc2", []int{wFC2W, wFC2B}},
	TapOut:      {"the MLP residual", nil},
}

// checkMerger records a non-finite output of the merger named by prefix, run after block
// after on a finite input (a non-finite input was reported where it appeared): its weights
// hold a NaN or Inf, or its values overflowed.
func (r *Run) checkMerger(prefix string, after int, in, out []float32, w ckpt.MergerWeights) {
	if r.NonFinite != nil || guard.Finite(out) || !guard.Finite(in) {
		return
	}
	op := "the final merger"
	if prefix != "merger." {
		op = fmt.Sprintf("the deepstack merger %s (after block %d)", strings.TrimSuffix(prefix, "."), after)
	}
	bad := guard.NonFiniteWeights(w.NormW, w.NormB, w.FC1W, w.FC1B, w.FC2W, w.FC2B)
	if len(bad) == 0 {
		op += ": its weights are finite, its values overflowed"
	}
	r.NonFinite = &guard.NonFinite{Block: after, Merger: prefix, Op: op, Weights: bad}
}

// checkEmbedding records a non-finite embedding: the pixel values, the patch embedding or
// the position table.
func (r *Run) checkEmbedding() {
	if r.NonFinite != nil || guard.Finite(r.Embed) {
		return
	}
	res := r.e.Res
	op := "patch and position embedding"
	if !guard.Finite(r.Input.Pixels) {
		op = "pixel values (the preprocessor's mean/std?)"
	}
	r.NonFinite = &guard.NonFinite{Block: -1, Op: op, Weights: guard.NonFiniteWeights(ckpt.EmbedWeights(r.e.Checkpoint.Config, res))}
}

// checkBlock records block i's failure the first time an output is not finite (st: the
// block's statistics, whose pass over its input and output found it, inside the block's
// wall time), by re-running the block from in (its input) with every intermediate read.
func (r *Run) checkBlock(ctx context.Context, i int, in []float32, st probe.PatchStats) error {
	if r.NonFinite != nil || st.Finite || !st.InFinite { // the statistics' pass saw every value
		return nil
	}
	w, _, err := r.e.Res.Block(i)
	if err != nil {
		return err
	}
	defer r.e.Res.Done(i)
	be := r.e.Backend
	saved := r.e.Settings.Keep.Taps
	r.e.Settings.Keep.Taps = AllTaps // read everything this once; nothing reaches the Store
	defer func() { r.e.Settings.Keep.Taps = saved }()
	r.g.uploadHidden(in) // the block's input, on the rows the graph runs (rows.go)
	r.startPass()
	r.g.attentionHalf(i, w)
	if _, err := be.Commit(); err != nil {
		return err
	}
	taps := r.downloadTaps(AllTaps) // q and k apart: the first of them not finite is named
	r.startPass()
	if err := r.g.mlpHalf(ctx, w); err != nil {
		be.Commit()
		return err
	}
	if _, err := be.Commit(); err != nil {
		return err
	}
	for t, x := range r.downloadTaps(AllTaps) {
		taps[t] = x
	}
	taps[TapFFNAct] = r.act
	r.g.uploadHidden(r.cur) // the run goes on from the block's real output
	for _, t := range Taps() {
		if x, ok := taps[t]; ok && !guard.Finite(x) {
			p := producers[t]
			var ws []backend.Weight
			for _, k := range p.weights {
				ws = append(ws, w[k])
			}
			r.NonFinite = &guard.NonFinite{Block: i, Tap: t.String(), Op: p.op, Weights: guard.NonFiniteWeights(ws...)}
			return nil
		}
	}
	r.NonFinite = &guard.NonFinite{Block: i, Op: "the block (no intermediate was non-finite on a second run: not reproducible)"}
	return nil
}
