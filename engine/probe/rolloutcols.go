package probe

// rolloutcols.go: the rollout table's fused attention rows on AVX-512, 32 queries at a time in
// the lanes of kernel.FMA6x32 — the engine's flash attention (engine/cpu/attention_flash.go)
// without its P.V and without the online rescaling: per head, the score tile S^T = K Q^T
// ([L keys][32 queries]; each score the same float32 dot product as Scores in attention.go,
// the x rows 6 keys of one head laid out contiguously once per fold by colKeys, the W operand
// the 32 queries' Q^T), then
// kernel.ColScaleMax (x scale in float32, the column max), kernel.ColExpSum (exp(s - max) in
// float32 within 2 ulp, each column summed in float64 in key order) and kernel.ColScale
// (x float32(1/sum)): the head's attention rows, in float32, in the lanes. The heads are fused
// into a second tile in head order (mean: summed, then x float32(1/H); max; min), and the
// table gathers each lane into the float64 row hatRow takes.
//
// The float64 path (fusedRows: float64 scale, exp and head means) costs ~14 ns an entry and
// head on this machine, 60-85% of a table's fold; this one ~3.5 (BenchmarkTableScoring*, per
// CPU second: 9-11 GFLOP against 34-41 at 5,120; the FMA6x32 calls are half of it, at ~37 G
// multiply-adds a CPU second once the keys are contiguous: read in place from the q|k rows,
// 288 bytes of every 9 KiB row, they ran at 15). The table takes it with kernel.UseAVX512 and
// no discard: a discard chooses its drops by comparing values, so it keeps the float64 path,
// whose fused matrix is Rollout's bit for bit.
//
// Numerics: with M the largest |score| (after scale) of the block and u = 2^-24, a head's
// entry is within about (2*spread + 8M + 7)u relative of the float64 path's (float32 scale and
// s - max: u*|s| each; exp: 2u; 1/sum and the scale: 3u), a fused entry adds (H+1)u, and Â's
// row (hatRow) twice that plus u: the test's bound is (24M + 2H + 17)u. Every step is one lane:
// a query's bits depend on its q row, its segment's keys and the heads, not on its lane, the
// 6-key grouping, the task cut or the thread count.
//
// Invariant: lane c of every tile is the query q0+c throughout — its Q^T column, its max, its
// sum, its fused value and the row gathered for it. The mutation that would silently break
// it: gathering lane c+1 (or packing Q^T one query over): each row is still a probability
// row over the segment, of the neighbouring query.

import (
	"math"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// colLanes is FMA6x32's lanes: the queries of one tile.
const colLanes = 2 * keyStrip

// colScratch is one worker's buffers for fusedCols over segments of at most L keys.
type colScratch struct {
	tile, acc []float32 // [L][32]: one head's rows, the fused rows
	qt        []float32 // [hd][32]: Q^T of the 32 queries, one head
	m         []float64 // one gathered row
}

func newColScratch(L, hd int) *colScratch {
	return &colScratch{tile: make([]float32, L*colLanes), acc: make([]float32, L*colLanes),
		qt: make([]float32, hd*colLanes), m: make([]float64, L)}
}

// colKeys lays out the keys of seg head by head, each key's hd values contiguous:
// out[(h*L + j)*hd + x] = k_{Start+j}[h*hd + x] (L*D float32), the heads on at most threads
// goroutines.
func (ab *attnBlock) colKeys(seg backend.Segment, threads int) []float32 {
	L, hd, D := seg.End-seg.Start, ab.hd, ab.d
	out := make([]float32, L*D)
	par.Do(ab.heads, min(threads, par.Workers(ab.heads)), func(_, h int) {
		for j := range L {
			copy(out[(h*L+j)*hd:][:hd], ab.qk[(seg.Start+j)*2*D+D+h*hd:][:hd])
		}
	})
	return out
}

// fusedCols fills ws.acc's lanes c < nq with the fused attention row (over seg) of query
// q0+c, every head fused by f, the keys read from keys (colKeys). Lanes past nq repeat query
// q0+nq-1 and are not to be read. Call it only with kernel.UseAVX512.
func (ab *attnBlock) fusedCols(ws *colScratch, seg backend.Segment, keys []float32, q0, nq int, f Fusion) {
	L, hd, D := seg.End-seg.Start, ab.hd, ab.d
	tile, acc := ws.tile[:L*colLanes], ws.acc[:L*colLanes]
	scale := float32(ab.scale)
	var xp, yp [rtMR]unsafe.Pointer
	qtp := f32Ptr(ws.qt, 0, hd*colLanes)
	for h := range ab.heads {
		for x := range hd { // Q^T: qt[x*32 + c] = q_{q0+c}[h*hd + x]
			lane := ws.qt[x*colLanes:][:colLanes]
			for c := range lane {
				lane[c] = ab.qk[(q0+min(c, nq-1))*2*D+h*hd+x]
			}
		}
		for j := 0; j < L; j += rtMR { // S^T = K Q^T, 6 keys a call (a short group repeats its last)
			for a := range rtMR {
				k := j + min(a, L-1-j)
				xp[a] = f32Ptr(keys, (h*L+k)*hd, hd)
				yp[a] = f32Ptr(tile, k*colLanes, colLanes)
			}
			kernel.FMA6x32(&xp, qtp, hd, &yp, 0)
		}
		if ab.masked != nil { // keys the run did not see: -inf, which ColExpSum's clamp makes 0
			for j, m := range ab.masked[seg.Start:seg.End] {
				if m {
					for c := range colLanes {
						tile[j*colLanes+c] = float32(math.Inf(-1))
					}
				}
			}
		}
		var mx [colLanes]float32
		var sum [colLanes]float64
		kernel.ColScaleMax(&tile[0], L, scale, &mx)
		kernel.ColExpSum(&tile[0], L, &mx, &sum)
		var inv [colLanes]float32
		for c := range inv {
			inv[c] = float32(1 / sum[c])
		}
		kernel.ColScale(&tile[0], L, &inv)
		switch {
		case h == 0:
			copy(acc, tile)
		case f == FuseMean:
			for i, x := range tile {
				acc[i] += x
			}
		case f == FuseMax:
			for i, x := range tile {
				acc[i] = max(acc[i], x)
			}
		default:
			for i, x := range tile {
				acc[i] = min(acc[i], x)
			}
		}
	}
	if ab.dropped != nil { // a query the block did not run attends to nothing (fusedRows)
		for c := range nq {
			if ab.dropped[q0+c] {
				for j := range L {
					acc[j*colLanes+c] = 0
				}
			}
		}
	}
	if f == FuseMean {
		var invH [colLanes]float32
		for c := range invH {
			invH[c] = float32(1 / float64(ab.heads))
		}
		kernel.ColScale(&acc[0], L, &invH)
	}
}

// gather copies lane c of ws.acc (L keys) into ws.m as float64 and returns it.
func (ws *colScratch) gather(c, L int) []float64 {
	m := ws.m[:L]
	for j := range m {
		m[j] = float64(ws.acc[j*colLanes+c])
	}
	return m
}
