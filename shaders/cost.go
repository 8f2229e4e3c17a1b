package shaders

// cost.go: what each dispatch asks of a GPU — its useful FLOPs and, as the kernel is written,
// the instruction slots it issues on simdgroup matrices and on the scalar lanes, the bytes it
// moves through threadgroup memory, through the GPU's caches and from DRAM, and the
// threadgroups it runs. The performance model (model.go) turns a Cost into a time on a named
// GPU; the Metal backend uses the same numbers to keep every command buffer short of the
// GPU watchdog.
//
// Invariant: a kernel's cost is computed here from the same tile constants the kernel uses
// (a change of tile in a .metal file without a change here is a wrong model, not a crash:
// TestCostFollowsTheKernels pins the tiles against the library text). Mutation that would
// silently break it: counting the useful FLOPs of a padded tile (64x64 for a 1-row matmul)
// as useful — the model's fraction of peak would then look best where the kernel wastes most.

import (
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
)

// Cost is the work of one dispatch.
type Cost struct {
	Op    string // "matmul 5120x1152x3456 bf16", "attention 5120q x 5120k x 16h x 72": for tables
	FLOPs float64
	// Issued work: MatrixFLOPs on simdgroup matrices (padded tiles and the attention's
	// rescale products included), ScalarSlots on the 32-wide lanes (one per thread-instruction,
	// transcendental functions weighted by their issue cost).
	MatrixFLOPs, ScalarSlots float64
	// Bytes: through threadgroup memory (stores and simdgroup/thread loads), as the threads
	// read and write device memory (re-reads included: the caches serve most of them), and
	// each operand once (what DRAM must deliver at least).
	ThreadgroupBytes, CacheBytes, DRAMBytes float64
	Threadgroups                            int
	ThreadsPerGroup                         int
	ThreadgroupMemBytes                     int // per threadgroup
}

// Issue costs in lane slots (thread-instructions), from measured Apple GPU throughputs
// (M1/M2: FP32 FMA 1 per lane-cycle, EXP2 a quarter rate, reciprocal ~10 cycles): a precise
// exp is exp2 plus its argument scaling and range handling; tanh and erf are built on exp.
const (
	slotsExp    = 8
	slotsTanh   = 20
	slotsErf    = 30
	slotsQuick  = slotsExp + slotsDivide + 2 // exp, the division, the scaling and the add
	slotsDivide = 12
	slotsStage  = 8 // stage one element: bounds test, address, load, widen, store
)

func f(n int) float64 { return float64(n) }

func layerNormCost(rows, cols int, wt, bt DType) Cost {
	n := f(rows) * f(cols)
	return Cost{
		Op:    fmt.Sprintf("layer_norm %dx%d", rows, cols),
		FLOPs: 8 * n, ScalarSlots: 14*n + f(rows)*(2*slotsDivide+64),
		CacheBytes: 12*n + f(rows)*f(cols)*f(wt.Size()+bt.Size()), DRAMBytes: 8*n + f(cols)*f(wt.Size()+bt.Size()),
		Threadgroups: rows, ThreadsPerGroup: layerNormThreads,
	}
}

// matmulCost follows matmul.metal: bm x 64 tiles of 4 simdgroups, k steps of MM_K = 32.
func matmulCost(bm, rows, in, out int, wt, bt DType, hasBias bool, ep Epilogue) Cost {
	tiles := ceilDiv(rows, bm) * ceilDiv(out, matmulTile)
	steps := f(tiles) * f(ceilDiv(in, matmulK))
	tileElems := f(bm * matmulTile)
	mn := f(rows) * f(out)
	staged := f((bm + matmulTile) * matmulK) // x and W elements per k step
	c := Cost{
		Op:          fmt.Sprintf("matmul %dx%dx%d %s", rows, in, out, wt),
		FLOPs:       2 * mn * f(in),
		MatrixFLOPs: steps * 2 * tileElems * matmulK,
		// staging x and W per k step; per output: the tile store, bias, the epilogue
		ScalarSlots: steps*staged*slotsStage + f(tiles)*tileElems*6,
		// per k step: both stages stored, then each simdgroup loads bm/16 x and 4 W tiles per
		// 8-deep sub-step; per tile: the accumulators through threadgroup memory for the epilogue
		ThreadgroupBytes: steps*(staged*4+4*(matmulK/8)*f(bm/16+4)*256) + f(tiles)*tileElems*8,
		CacheBytes:       steps*f(matmulK)*(f(bm)*4+f(matmulTile)*f(wt.Size())) + 4*mn,
		DRAMBytes:        f(rows)*f(in)*4 + f(out)*f(in)*f(wt.Size()) + 4*mn,
		Threadgroups:     tiles, ThreadsPerGroup: matmulThreads,
		ThreadgroupMemBytes: (bm + matmulTile) * (matmulK + 4) * 4,
	}
	c.addEpilogue(mn, out, bt, hasBias, ep)
	return c
}

// matmulScalarCost follows matmul_scalar.metal: 64 x 64 tiles of 16 x 16 threads (4 x 4
// outputs each), k steps of MMS_K = 16; per k step all 256 threads stage x and W, then each
// thread, per k, loads 4 x and 4 W values from threadgroup memory and issues 16 FMAs. A
// threadgroup-memory read is counted once per distinct address a simdgroup reads (its lanes
// read 2 x rows and 16 W rows: the other lanes' reads are broadcasts); that is an assumption,
// as the model's threadgroup bandwidth is.
func matmulScalarCost(rows, in, out int, wt, bt DType, hasBias bool, ep Epilogue) Cost {
	const tile, k, threads = matmulScalarTile, matmulScalarK, matmulScalarThread
	const side = 16
	tiles := ceilDiv(rows, tile) * ceilDiv(out, tile)
	steps := f(tiles) * f(ceilDiv(in, k))
	tileElems := f(tile * tile)
	mn := f(rows) * f(out)
	staged := f(2 * tile * k) // x and W elements per k step
	sgs := f(threads / 32)
	c := Cost{
		Op:    fmt.Sprintf("matmul %dx%dx%d %s (scalar)", rows, in, out, wt),
		FLOPs: 2 * mn * f(in),
		// staging; per k: 8 threadgroup loads and 16 FMAs a thread; per output: the epilogue
		ScalarSlots:      steps*(staged*slotsStage+f(threads)*k*(8+16)) + f(tiles)*tileElems*6,
		ThreadgroupBytes: steps * (staged*4 + sgs*k*(2+side)*4*4),
		CacheBytes:       steps*f(k)*(f(tile)*4+f(tile)*f(wt.Size())) + 4*mn,
		DRAMBytes:        f(rows)*f(in)*4 + f(out)*f(in)*f(wt.Size()) + 4*mn,
		Threadgroups:     tiles, ThreadsPerGroup: threads,
		ThreadgroupMemBytes: 2 * tile * (k + 1) * 4,
	}
	c.addEpilogue(mn, out, bt, hasBias, ep)
	return c
}

// addEpilogue counts what the epilogue adds to a matmul of mn outputs: the bias read, the
// GELU, the residual read and written.
func (c *Cost) addEpilogue(mn float64, out int, bt DType, hasBias bool, ep Epilogue) {
	if hasBias {
		c.CacheBytes += mn * f(bt.Size())
		c.DRAMBytes += f(out) * f(bt.Size())
	}
	if ep.GELU {
		slots := slotsTanh
		switch ep.Form {
		case backend.GELUErf:
			slots = slotsErf
		case backend.GELUQuick, backend.GELUSiLU:
			slots = slotsQuick
		}
		c.ScalarSlots += mn * f(slots)
	}
	if ep.Residual.Handle != nil {
		c.ScalarSlots += 4 * mn
		c.CacheBytes += 8 * mn
		c.DRAMBytes += 8 * mn
	}
}

func ropeCost(seq, heads, headDim int) Cost {
	pairs := f(seq) * f(heads) * f(headDim/2)
	return Cost{
		Op:    fmt.Sprintf("rope2d %dx%dx%d", seq, heads, headDim),
		FLOPs: 6 * pairs, ScalarSlots: 16 * pairs,
		CacheBytes: 32 * pairs, DRAMBytes: 16*pairs + 8*f(seq)*f(headDim),
		Threadgroups: ceilDiv(seq*heads*headDim/2, elementwiseThreads), ThreadsPerGroup: elementwiseThreads,
	}
}

// flashCost follows attention.metal's attention_hdN: 32 queries per threadgroup, key tiles of
// bk keys; per (query tile, key tile, head): K and V staged, S = QK^T, the softmax on S in
// threadgroup memory, O rescaled by a diagonal product, O += PV.
func flashCost(nq, nk, heads, hd int) Cost {
	bk := flashKeyTile(hd)
	qt := ceilDiv(nq, flashQueries)
	pairs := f(qt) * f(ceilDiv(nk, bk)) * f(heads)
	const sgs = flashQueries / 8
	tilesK, tilesD := f(bk/8), f(hd/8)
	mma := 1024.0 // FLOPs of one 8x8x8 product
	return Cost{
		Op:          fmt.Sprintf("attention %dq x %dk x %dh x %d", nq, nk, heads, hd),
		FLOPs:       4 * f(nq) * f(nk) * f(hd) * f(heads),
		MatrixFLOPs: pairs*sgs*(2*tilesK*tilesD+tilesD)*mma + f(qt)*f(heads)*sgs*tilesD*mma,
		// staging K and V; per score: read, scale, mask, max, exp, sum, write (14 slots)
		ScalarSlots: pairs * (2*f(bk)*f(hd)*slotsStage + flashQueries*f(bk)*(6+slotsExp)),
		ThreadgroupBytes: pairs * (2*f(bk)*f(hd)*4 + // K and V stored
			sgs*(2*tilesK*tilesD+tilesK+1)*256 + // K^T, V, P and diag tiles loaded per simdgroup
			flashQueries*f(bk)*4*4), // S stored, read, P written, P loaded
		CacheBytes:          pairs*2*f(bk)*f(hd)*4 + f(qt)*f(heads)*flashQueries*f(hd)*8,
		DRAMBytes:           (3*f(nk) + f(nq)) * f(heads) * f(hd) * 4,
		Threadgroups:        qt * heads,
		ThreadsPerGroup:     flashThreads,
		ThreadgroupMemBytes: (2*bk*hd + flashQueries*bk + 256) * 4,
	}
}

// scalarAttentionCost is `attention`: one simdgroup per query, each lane a key, K and V read
// from device memory for every query.
func scalarAttentionCost(nq, nk, heads, hd int) Cost {
	scores := f(nq) * f(nk) * f(heads)
	return Cost{
		Op:          fmt.Sprintf("attention %dq x %dk x %dh x %d (scalar)", nq, nk, heads, hd),
		FLOPs:       4 * scores * f(hd),
		ScalarSlots: scores * (2*f(hd) + slotsExp + 8),
		// per score: the key row (one lane) and the value rows (all lanes, per output dim)
		CacheBytes:       scores * f(hd) * 8,
		ThreadgroupBytes: scores * 8,
		DRAMBytes:        (3*f(nk) + f(nq)) * f(heads) * f(hd) * 4,
		Threadgroups:     ceilDiv(nq, attentionQueries) * heads, ThreadsPerGroup: 32 * attentionQueries,
		ThreadgroupMemBytes: attentionQueries * 32 * 4,
	}
}

func elementwiseCost(kernel string, n int) Cost {
	c := Cost{Op: fmt.Sprintf("%s %d", kernel, n), Threadgroups: ceilDiv(n, elementwiseThreads), ThreadsPerGroup: elementwiseThreads}
	switch kernel {
	case "add_into":
		c.FLOPs, c.ScalarSlots, c.CacheBytes = f(n), 4*f(n), 12*f(n)
	case "gelu_tanh":
		c.FLOPs, c.ScalarSlots, c.CacheBytes = 8*f(n), (4+slotsTanh)*f(n), 8*f(n)
	case "mul_into":
		c.FLOPs, c.ScalarSlots, c.CacheBytes = f(n), 4*f(n), 12*f(n)
	case "gelu_quick", "gelu_silu":
		c.FLOPs, c.ScalarSlots, c.CacheBytes = 4*f(n), (4+slotsQuick)*f(n), 8*f(n)
	default:
		c.FLOPs, c.ScalarSlots, c.CacheBytes = 12*f(n), (4+slotsErf)*f(n), 8*f(n)
	}
	c.DRAMBytes = c.CacheBytes
	return c
}

// fillColumnsCost: each of n columns is read over rows (the mean) and written over rows.
func fillColumnsCost(rows, n int, mean bool) Cost {
	elems := f(rows) * f(n)
	c := Cost{Op: fmt.Sprintf("fill_columns %dx%d", rows, n), ScalarSlots: 4 * elems, CacheBytes: 4 * elems,
		Threadgroups: ceilDiv(n, elementwiseThreads), ThreadsPerGroup: elementwiseThreads}
	if mean {
		c.FLOPs, c.ScalarSlots, c.CacheBytes = elems, 8*elems, 8*elems
	}
	c.DRAMBytes = c.CacheBytes
	return c
}
