package probe

// rollout.go: the rollout's options as vit-explain has them (jacobgil/vit-explain,
// vit_rollout.py) — how the heads of a block are fused (mean, max, min) and which share of
// the fused attention is discarded before the identity is added — and the fused L x L
// matrix of one block over one segment that a discard needs.
//
// vit-explain, per block: fused = mean|max|min over heads; the lowest discard_ratio of the
// flattened fused matrix are set to 0, except entry 0 (the class token's self term); then
// a = (fused + I)/2, rows renormalized. There is no class token here: every diagonal entry
// (each patch's attention to itself) is kept, and the identity is added after the discard,
// so neither self term is ever dropped. Ties at the threshold go by the flat index i*L + j,
// lower first, so the same entries go whatever the scheduling.
//
// Invariant: the entries dropped are exactly the k = floor(discard * L^2) lowest of the
// block's fused matrix (by value, then flat index) that are not on its diagonal, chosen over
// the whole matrix, and the identity is added after dropping. The mutation that would
// silently break it: choosing the lowest per row (or dropping the diagonal too): the result is
// still a probability row that looks like a sharper heatmap, of another matrix.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/internal/par"
)

// Fusion is how the heads of a block are combined into one attention matrix.
type Fusion int

const (
	FuseMean Fusion = iota // the mean over heads (Abnar & Zuidema; the default)
	FuseMax                // the largest head, entry by entry
	FuseMin                // the smallest head, entry by entry
)

var fusionNames = []string{"mean", "max", "min"}

// Fusions lists the fusions, in menu order.
func Fusions() []Fusion { return []Fusion{FuseMean, FuseMax, FuseMin} }

func (f Fusion) String() string {
	if f < 0 || int(f) >= len(fusionNames) {
		return fmt.Sprintf("fusion(%d)", int(f))
	}
	return fusionNames[f]
}

// ParseFusion accepts a name as String gives it (case-insensitive).
func ParseFusion(s string) (Fusion, bool) {
	for i, n := range fusionNames {
		if strings.EqualFold(n, s) {
			return Fusion(i), true
		}
	}
	return FuseMean, false
}

// RolloutOptions are the rollout's head fusion and discard ratio. The zero value is the
// plain rollout: the mean over heads, nothing discarded.
type RolloutOptions struct {
	Fusion Fusion
	// Discard in [0, 1) is the share of the fused L x L attention of each block (L: the
	// query's frame) set to 0 before the identity is added: the floor(Discard*L*L) lowest
	// entries, the diagonal excepted. A windowed block's matrix over the frame is
	// block-diagonal and its zeros between windows count among the lowest, as they would in
	// vit-explain's flattened matrix of the same block. A discard keeps one fused matrix (L*L float32) at a
	// time.
	Discard float64
}

func (o RolloutOptions) check() error {
	if o.Fusion < FuseMean || o.Fusion > FuseMin {
		return fmt.Errorf("rollout: unknown head fusion %d", int(o.Fusion))
	}
	if !(o.Discard >= 0 && o.Discard < 1) {
		return fmt.Errorf("rollout: discard ratio %v outside [0, 1)", o.Discard)
	}
	return nil
}

// dropCount is how many entries of an L x L fused matrix the options discard (the diagonal
// ones among them are kept).
func (o RolloutOptions) dropCount(L int) int {
	return int(math.Floor(o.Discard * float64(L) * float64(L)))
}

// maxFusedBytes bounds the one fused matrix a discard keeps (L up to 16,384).
const maxFusedBytes = 1 << 30

func checkFusedSize(L int) error {
	if b := int64(L) * int64(L) * 4; b > maxFusedBytes {
		return fmt.Errorf("a discard needs the %d x %d fused attention of the segment (%d MiB), over the %d MiB bound: discard 0, or lower max pixels", L, L, b>>20, maxFusedBytes>>20)
	}
	return nil
}

// fusedRows fills row a of sc.m with the attention of qs[a] over seg: head's row for
// head >= 0, else the heads fused by f (the mean through headMeans, so its bits are the
// mean rows' everywhere).
// A query the block no longer had (token dropping) attends to nothing: its row is 0, so its
// rollout row is the identity's alone (its state passes the block unchanged, as it did).
func (ab *attnBlock) fusedRows(sc *scratch, qs []int, seg backend.Segment, head int, f Fusion) {
	defer ab.clearDropped(sc, qs, seg.Len())
	L := seg.End - seg.Start
	if head < 0 && f == FuseMean {
		ab.headMeans(sc, qs, seg)
		return
	}
	first, last := 0, ab.heads-1
	if head >= 0 {
		first, last = head, head
	}
	for h := first; h <= last; h++ {
		ab.scores(sc, h, qs, seg)
		for a := range qs {
			s, m := row(sc.s, a, L), row(sc.m, a, L)
			z := softmaxExp(s)
			for j, e := range s {
				p := e / z
				switch {
				case h == first:
					m[j] = p
				case f == FuseMax:
					m[j] = max(m[j], p)
				case f == FuseMin:
					m[j] = min(m[j], p)
				}
			}
		}
	}
}

// FusedAttention is block's attention over seg as one L x L matrix, row-major (row i: the
// i-th query of the segment, column j: its j-th key): head's for head >= 0, else the heads
// fused by f. Float32, as a discarding rollout keeps it. It needs q and k kept (Settings.Keep).
func (s *Store) FusedAttention(ctx context.Context, block int, seg backend.Segment, head int, f Fusion) ([]float32, error) {
	if err := s.checkFrame(seg); err != nil {
		return nil, err
	}
	if err := checkFusedSize(seg.End - seg.Start); err != nil {
		return nil, err
	}
	return s.fusedMatrix(ctx, block, seg, head, f)
}

// checkFrame says whether seg is one of the page's frames (geom.Layout.Segments).
func (s *Store) checkFrame(seg backend.Segment) error {
	if slices.Contains(s.Layout.Segments, seg) {
		return nil
	}
	return fmt.Errorf("segment %v is not one of the page's frames %v", seg, s.Layout.Segments)
}

// checkSegment says whether seg is one of block's attention segments (a frame, or a window
// of a windowed block).
func (s *Store) checkSegment(block int, seg backend.Segment) error {
	if slices.Contains(s.Layout.SegmentsOf(block), seg) {
		return nil
	}
	what := "frames"
	if s.Layout.Windowed(block) {
		what = "windows"
	}
	return fmt.Errorf("segment %v is not one of block %d's %s", seg, block, what)
}

// fusedMatrix computes FusedAttention on all cores, qTile rows a task.
func (s *Store) fusedMatrix(ctx context.Context, block int, seg backend.Segment, head int, f Fusion) ([]float32, error) {
	if head >= s.Heads {
		return nil, s.checkHead(head)
	}
	var heads []int
	if head >= 0 {
		heads = []int{head}
	}
	segs := s.segmentsIn(block, seg)
	ab, err := s.attnBlockHeads(block, heads, segs...)
	if err != nil {
		return nil, err
	}
	L := seg.End - seg.Start
	out := make([]float32, L*L)
	if err := ab.fusedFrameInto(ctx, segs, seg, head, f, out, 0, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// fusedFrameInto is fusedMatrixInto over frame seg for a block whose segments inside it are
// segs (the frame itself, or the windows of a windowed block): block-diagonal, +0 between
// windows, each window's rows and columns at its offset in the frame.
func (ab *attnBlock) fusedFrameInto(ctx context.Context, segs []backend.Segment, seg backend.Segment, head int, f Fusion, out []float32, threads int, done func(rows int)) error {
	if len(segs) == 1 && segs[0] == seg {
		return ab.fusedMatrixInto(ctx, seg, head, f, out, threads, done)
	}
	L := seg.End - seg.Start
	clear(out)
	for _, w := range segs {
		Lw, off := w.End-w.Start, w.Start-seg.Start
		m := make([]float32, Lw*Lw)
		if err := ab.fusedMatrixInto(ctx, w, head, f, m, threads, done); err != nil {
			return err
		}
		for i := range Lw {
			copy(out[(off+i)*L+off:][:Lw], m[i*Lw:][:Lw])
		}
	}
	return nil
}

// fusedMatrixInto fills out (L*L) with fusedMatrix's values on at most threads goroutines
// (0: all cores), qTile rows a task; done (if not nil) is told how many rows each finished
// task filled.
func (ab *attnBlock) fusedMatrixInto(ctx context.Context, seg backend.Segment, head int, f Fusion, out []float32, threads int, done func(rows int)) error {
	L := seg.End - seg.Start
	tasks := (L + qTile - 1) / qTile
	workers := par.Workers(tasks)
	if threads > 0 {
		workers = min(workers, threads)
	}
	scr := make([]*scratch, workers)
	return par.For(ctx, tasks, workers, func(w, t int) {
		if scr[w] == nil {
			scr[w] = newScratch(L)
		}
		qs := make([]int, 0, qTile)
		for i := t * qTile; i < min(L, (t+1)*qTile); i++ {
			qs = append(qs, seg.Start+i)
		}
		ab.fusedRows(scr[w], qs, seg, head, f)
		for a, q := range qs {
			dst := out[(q-seg.Start)*L:][:L]
			for j, x := range row(scr[w].m, a, L) {
				dst[j] = float32(x) + 0 // + 0: a -0 becomes +0, so bits order values
			}
		}
		if done != nil {
			done(len(qs))
		}
	})
}

// dropped is the threshold of a discard: entry i of the fused matrix is among the k lowest
// when (bits(f[i]), i) < (bits, idx); f holds no negative numbers, so the float32 bits order
// them as numbers (NaN above every number).
type dropped struct {
	f    []float32
	bits uint32
	idx  int
	all  bool
}

// drop says whether flat entry i is among the k lowest.
func (d *dropped) drop(i int) bool {
	if d.all {
		return true
	}
	b := math.Float32bits(d.f[i])
	return b < d.bits || (b == d.bits && i < d.idx)
}

// row fills m (L) with row i of the fused matrix (L x L), the dropped entries 0: the diagonal
// entry is always kept.
func (d *dropped) row(i, L int, m []float64) {
	for j, x := range d.f[i*L : (i+1)*L] {
		m[j] = float64(x)
		if i != j && d.drop(i*L+j) {
			m[j] = 0
		}
	}
}

// newDropped finds the k-th lowest (0-based) entry of f by (bits, flat index): two
// histogram passes over the bits (high, then low 16), then one scan for the tie.
func newDropped(f []float32, k int) *dropped {
	d := &dropped{f: f}
	if k >= len(f) {
		d.all = true
		return d
	}
	var hist [1 << 16]int
	for _, x := range f {
		hist[math.Float32bits(x)>>16]++
	}
	less := 0
	hi := 0
	for ; less+hist[hi] <= k; hi++ {
		less += hist[hi]
	}
	clear(hist[:])
	for _, x := range f {
		if b := math.Float32bits(x); int(b>>16) == hi {
			hist[b&0xffff]++
		}
	}
	lo := 0
	for ; less+hist[lo] <= k; lo++ {
		less += hist[lo]
	}
	d.bits = uint32(hi)<<16 | uint32(lo)
	r := k - less // the r-th (0-based) entry equal to bits, in flat order, is the threshold
	for i, x := range f {
		if math.Float32bits(x) == d.bits {
			if r == 0 {
				d.idx = i
				break
			}
			r--
		}
	}
	return d
}
