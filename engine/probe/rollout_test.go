package probe_test

// rollout_test.go holds the rollout's options (rollout.go) to brute force on the fixture
// (four segments of 44 patches): the fused matrix against per-head float64 reference
// matrices fused by plain loops, and the rollout with a fusion and a discard against plain
// matrix products built from that fused matrix with the lowest entries dropped by a full sort.
//
// Invariant: a fusion is that elementwise function of the heads, a discard drops the
// floor(r*L^2) globally lowest off-diagonal entries and adds the identity after. The
// mutations it catches: a wrong fusion (mean for max, max for min), a per-row discard, the
// diagonal dropped, the identity added before the discard, the highest entries dropped.

import (
	"context"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/probe"
)

// segmentBlock is the L x L block of a full S x S matrix for seg.
func segmentBlock(full []float64, S int, seg backend.Segment) []float64 {
	L := seg.End - seg.Start
	out := make([]float64, L*L)
	for i := range L {
		for j := range L {
			out[i*L+j] = full[(seg.Start+i)*S+seg.Start+j]
		}
	}
	return out
}

// fuseRef fuses the heads' reference matrices of one block over seg.
func fuseRef(t *testing.T, run *engine.Run, block int, seg backend.Segment, f probe.Fusion) []float64 {
	S, L := run.Layout.Rows(), seg.End-seg.Start
	out := make([]float64, L*L)
	H := run.Config().Heads
	for h := range H {
		a := segmentBlock(headMatrix(t, run, block, h), S, seg)
		for i, x := range a {
			switch {
			case f == probe.FuseMean:
				out[i] += x / float64(H)
			case h == 0:
				out[i] = x
			case f == probe.FuseMax:
				out[i] = math.Max(out[i], x)
			default:
				out[i] = math.Min(out[i], x)
			}
		}
	}
	return out
}

type discardMode int

const (
	discardGlobal  discardMode = iota // vit-explain: the lowest of the whole matrix, diagonal kept
	discardPerRow                     // a broken variant: the lowest of each row
	discardDiagToo                    // a broken variant: the diagonal may go
)

// dropRef zeroes the floor(r*L*L) lowest entries of m (by value, then flat index).
func dropRef(m []float64, L int, r float64, mode discardMode) []float64 {
	out := slices.Clone(m)
	k := int(math.Floor(r * float64(L) * float64(L)))
	if mode == discardPerRow {
		per := k / L
		for i := range L {
			idx := make([]int, L)
			for j := range idx {
				idx[j] = j
			}
			sort.SliceStable(idx, func(a, b int) bool { return m[i*L+idx[a]] < m[i*L+idx[b]] })
			for _, j := range idx[:per] {
				if j != i {
					out[i*L+j] = 0
				}
			}
		}
		return out
	}
	idx := make([]int, L*L)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return m[idx[a]] < m[idx[b]] })
	for _, e := range idx[:k] {
		if mode == discardDiagToo || e/L != e%L {
			out[e] = 0
		}
	}
	return out
}

// rolloutRef is row q (segment-local) of Â_upTo ... Â_0 from the given fused matrices.
func rolloutRef(fused [][]float64, L, upTo, q int, r float64, mode discardMode) []float64 {
	var mats [][]float64
	for b := upTo; b >= 0; b-- {
		mats = append(mats, hat(dropRef(fused[b], L, r, mode), L, true))
	}
	p := product(mats, L)
	return p[q*L : (q+1)*L]
}

func diffSeg(got []float32, seg backend.Segment, want []float64) float64 {
	return maxDiff64(got[seg.Start:seg.End], want)
}

// FusedAttention is each fusion of the heads' reference matrices.
func TestFusedAttentionMatchesHeads(t *testing.T) {
	run, _ := analysisRun(t)
	seg := run.Layout.Segments[1]
	forEachScoreKernel(t, func(t *testing.T) {
		for _, f := range probe.Fusions() {
			got, err := run.Probes.FusedAttention(context.Background(), 2, seg, -1, f)
			must(t, err)
			if d := maxDiff64(got, fuseRef(t, run, 2, seg, f)); d > 1e-6 {
				t.Errorf("%v: off the reference by %.2e", f, d)
			}
			for _, other := range probe.Fusions() {
				if other != f && maxDiff64(got, fuseRef(t, run, 2, seg, other)) < 1e-4 {
					t.Errorf("%v fusion equals the %v fusion", f, other)
				}
			}
		}
		one, err := run.Probes.FusedAttention(context.Background(), 2, seg, 3, probe.FuseMax)
		must(t, err)
		S := run.Layout.Rows()
		if d := maxDiff64(one, segmentBlock(headMatrix(t, run, 2, 3), S, seg)); d > 1e-6 {
			t.Errorf("head 3 alone: off its matrix by %.2e", d)
		}
	})
	if _, err := run.Probes.FusedAttention(context.Background(), 2, backend.Segment{Start: 1, End: 5}, -1, probe.FuseMean); err == nil {
		t.Error("a segment that is not the page's was accepted")
	}
}

// Rollout with a fusion and a discard is the brute-force product, and not the product of
// the broken variants.
func TestRolloutOptionsMatchBruteForce(t *testing.T) {
	run, _ := analysisRun(t)
	ctx := context.Background()
	depth := run.Config().Depth
	seg := run.Layout.Segments[2]
	L := seg.End - seg.Start
	forEachScoreKernel(t, func(t *testing.T) {
		diagChecked := 0
		defer func() {
			if diagChecked == 0 {
				t.Error("no case drops a diagonal entry: the diagonal check is vacuous")
			}
		}()
		for _, f := range probe.Fusions() {
			var fused, fusedRef [][]float64
			for b := range depth {
				m, err := run.Probes.FusedAttention(ctx, b, seg, -1, f)
				must(t, err)
				fused = append(fused, f64(m))
				fusedRef = append(fusedRef, fuseRef(t, run, b, seg, f))
			}
			for _, q := range []int{seg.Start, seg.Start + L/2 + 1, seg.End - 1} {
				ql := q - seg.Start
				// No discard: the streamed fusion against independent float64 references.
				got, err := run.Probes.Rollout(ctx, q, depth-1, probe.RolloutOptions{Fusion: f})
				must(t, err)
				if d := diffSeg(got, seg, rolloutRef(fusedRef, L, depth-1, ql, 0, discardGlobal)); d > 1e-6 {
					t.Errorf("%v, no discard, query %d: off the reference by %.2e", f, q, d)
				}
				checkSegmentRow(t, run, "fused rollout", q, got)
				for _, r := range []float64{0.3, 0.9} {
					got, err := run.Probes.Rollout(ctx, q, depth-1, probe.RolloutOptions{Fusion: f, Discard: r})
					must(t, err)
					checkSegmentRow(t, run, "discarding rollout", q, got)
					want := rolloutRef(fused, L, depth-1, ql, r, discardGlobal)
					if d := diffSeg(got, seg, want); d > 1e-6 {
						t.Errorf("%v, discard %v, query %d: off the brute force by %.2e", f, r, q, d)
					}
					for _, bad := range []struct {
						name string
						m    discardMode
						r    float64
					}{{"per-row discard", discardPerRow, r}, {"no discard", discardGlobal, 0}} {
						if d := diffSeg(got, seg, rolloutRef(fused, L, depth-1, ql, bad.r, bad.m)); d < 1e-4 {
							t.Errorf("%v, discard %v, query %d: equals the %s (%.2e)", f, r, q, bad.name, d)
						}
					}
					// At 0.9 some diagonal entries are among the lowest (for the mean and the
					// max here): keeping them matters.
					if diag := rolloutRef(fused, L, depth-1, ql, r, discardDiagToo); r == 0.9 && maxDiff64(float32s(want), diag) > 1e-4 {
						diagChecked++
						if d := diffSeg(got, seg, diag); d < 1e-4 {
							t.Errorf("%v, query %d: the diagonal was discarded (%.2e)", f, q, d)
						}
					}
				}
			}
		}
	})
	// The zero options are the plain rollout, bit for bit.
	plain, err := run.Probes.Rollout(ctx, 100, 3)
	must(t, err)
	zero, err := run.Probes.Rollout(ctx, 100, 3, probe.RolloutOptions{})
	must(t, err)
	if !slices.Equal(plain, zero) {
		t.Error("Rollout with zero options differs from Rollout")
	}
	for _, bad := range []probe.RolloutOptions{{Discard: 1}, {Discard: -0.1}, {Discard: math.NaN()}, {Fusion: 7}} {
		if _, err := run.Probes.Rollout(ctx, 100, 3, bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

func f64(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func float32s(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

func TestParseFusion(t *testing.T) {
	for _, f := range probe.Fusions() {
		if g, ok := probe.ParseFusion(f.String()); !ok || g != f {
			t.Errorf("%v does not parse back (%v, %v)", f, g, ok)
		}
	}
	if _, ok := probe.ParseFusion("median"); ok {
		t.Error("median parsed")
	}
}
