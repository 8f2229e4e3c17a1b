package metal

// watchdog.go: no command buffer runs long enough for macOS's GPU watchdog (which aborts a
// command buffer that holds the GPU for seconds while the display waits). Every op's work is
// split into dispatches of at most dispatchBudget of modelled time on the slowest GPU the model
// knows (an 8-core M1), as few and as even as that allows (a bigger GPU then still gets many
// full waves per dispatch), and the backend commits the open command buffer once it holds
// more than passBudget: at 65,536 patches one block's attention is ~20 TFLOP, seconds on any Mac.
//
// Invariant: the split dispatches cover the op's queries (rows) exactly once, in order, each
// within its segment. Mutation that would silently break it: splitting a segment's queries
// but giving each piece its own piece of the keys too — every query would attend to a slice
// of its image, fluent and wrong (the conformance table's long segments and the split tests
// catch it).

import (
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

const (
	dispatchBudget = 300 * time.Millisecond
	passBudget     = 400 * time.Millisecond
)

// slowestGPU is what the budgets are measured on.
var slowestGPU = shaders.GPUs[0]

// evenSplit cuts n items, in tiles of tile items that each take unit of modelled time, into
// as few pieces as fit budget each (at least one tile a piece), all but the last the same
// whole number of tiles, as even as that allows.
func evenSplit(start, n, tile int, unit, budget time.Duration) []backend.Segment {
	if n <= 0 {
		return nil
	}
	most := tile // items per piece within the budget
	if unit > 0 {
		most = max(1, int(budget/unit)) * tile
	}
	pieces := (n + most - 1) / most
	step := ((n+pieces-1)/pieces + tile - 1) / tile * tile // <= most: most is a multiple of tile
	var out []backend.Segment
	for q := start; q < start+n; q += step {
		out = append(out, backend.Segment{Start: q, End: min(q+step, start+n)})
	}
	return out
}

// SplitAll makes every dispatch as small as the split allows (a query tile, 64 rows) and
// commits the command buffer after each, until restore is called: the conformance table's
// Split cases run the watchdog's paths this way on any GPU (conformance.Splitter).
func (b *Backend) SplitAll() (restore func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	op, pass := b.opBudget, b.budget
	b.opBudget, b.budget = 0, 0
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.opBudget, b.budget = op, pass
	}
}

// splitQueries cuts seg's queries into pieces that each fit the dispatch budget on kernel kn.
func splitQueries(kn string, seg backend.Segment, heads, headDim int, budget time.Duration) []backend.Segment {
	n := seg.Len()
	if n <= 0 {
		return nil
	}
	tile := shaders.AttentionQueryTile(kn)
	o := shaders.Operand{Handle: 0}
	keys := seg.Keys()
	probe := shaders.AttentionOn(kn, o, o, o, o, heads*headDim, keys, backend.Segment{Start: seg.Start, End: seg.Start + min(tile, n)},
		keys.End, heads, headDim, 1)
	return evenSplit(seg.Start, n, tile, slowestGPU.Estimate(probe.Cost).Time, budget)
}

// splitRows cuts a matmul's rows into pieces that each fit the dispatch budget on the kernel
// kernel(rows) names for them (the simdgroup one, or the slower scalar fallback: smaller pieces).
func splitRows(kernel func(rows int) string, rows, in, out int, wt shaders.DType, budget time.Duration) []backend.Segment {
	if rows <= 0 {
		return nil
	}
	const tile = 64 // the row tile of every matmul kernel, or a multiple of it
	o := shaders.Operand{Handle: 0}
	n := min(tile, rows)
	probe := shaders.MatMulOn(kernel(n), o, o, o, shaders.Operand{}, wt, shaders.F32, n, in, out, shaders.Epilogue{})
	return evenSplit(0, rows, tile, slowestGPU.Estimate(probe.Cost).Time, budget)
}
