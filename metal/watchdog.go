package metal

// watchdog.go: no command buffer runs long enough for macOS's GPU watchdog (which aborts a
// command buffer that holds the GPU for seconds while the display waits). Every op's work is
// split into dispatches of at most dispatchBudget of modelled time on the slowest GPU the model
// knows (an 8-core M1), and the backend commits the open command buffer once it holds more
// than passBudget: at 65,536 patches one block's attention is ~20 TFLOP, seconds on any Mac.
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
	dispatchBudget = 100 * time.Millisecond
	passBudget     = 400 * time.Millisecond
)

// slowestGPU is what the budgets are measured on.
var slowestGPU = shaders.GPUs[0]

// chunk is how many units of step (a query or row tile whose modelled time is unit) fit in
// budget; at least one.
func chunk(unit time.Duration, step int, budget time.Duration) int {
	n := 1
	if unit > 0 {
		n = max(1, int(budget/unit))
	}
	return n * step
}

// splitQueries cuts seg's queries into pieces that each fit the dispatch budget.
func splitQueries(seg backend.Segment, heads, headDim int, budget time.Duration) []backend.Segment {
	n := seg.End - seg.Start
	if n <= 0 {
		return nil
	}
	tile := shaders.AttentionQueryTile(shaders.AttentionKernel(headDim))
	probe := shaders.Attention(shaders.Operand{Handle: 0}, shaders.Operand{Handle: 0}, shaders.Operand{Handle: 0},
		shaders.Operand{Handle: 0}, heads*headDim, seg, backend.Segment{Start: seg.Start, End: seg.Start + min(tile, n)},
		seg.End, heads, headDim, 1)
	step := chunk(slowestGPU.Estimate(probe.Cost).Time, tile, budget)
	var out []backend.Segment
	for q := seg.Start; q < seg.End; q += step {
		out = append(out, backend.Segment{Start: q, End: min(q+step, seg.End)})
	}
	return out
}

// splitRows cuts a matmul's rows into pieces that each fit the dispatch budget.
func splitRows(rows, in, out int, wt shaders.DType, budget time.Duration) []backend.Segment {
	if rows <= 0 {
		return nil
	}
	const tile = 64
	o := shaders.Operand{Handle: 0}
	probe := shaders.MatMul(o, o, o, shaders.Operand{}, wt, shaders.F32, min(tile, rows), in, out, shaders.Epilogue{})
	step := chunk(slowestGPU.Estimate(probe.Cost).Time, tile, budget)
	var pieces []backend.Segment
	for r := 0; r < rows; r += step {
		pieces = append(pieces, backend.Segment{Start: r, End: min(r+step, rows)})
	}
	return pieces
}
