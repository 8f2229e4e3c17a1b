package intervene

// tokendrop.go: dropping tokens, an intervention (issue 22; visual-token pruning as FastV- and
// ToMe-style studies do it): after block After, only K merged tokens (merge units of m x m
// patches, the rows the merger makes one token of) go on: the K that received the most
// attention in block After (probe.Store.Received: the head-mean attention summed over the
// queries of their segment, summed over the unit's patches; ties to the lower unit), or K
// chosen at random (seeded by the page: the control). The later blocks, their deepstack
// mergers and the final merger run on the kept rows only, compacted, so they cost what K
// tokens cost.
//
// What a run shows stays page-shaped: a later block's kept taps are expanded back to the page
// (a dropped row's output is its output after block After, unchanged, as its state is; its
// other taps and its q|k are 0), the mergers' dropped tokens are 0 rows, and the probes know
// the dropped rows (geom.Views.Drop, which the probes read): no query sees them, they attend to nothing.
//
// Invariant: keeping every token changes no bit (the compaction is then the identity);
// transformers with the same rows gathered before block After+1 (its hidden state, rope and
// cu_seqlens) agrees within 1e-5 (TestTokenDropParity).
// Mutation that would silently break it: compacting the hidden state but not the rope tables:
// every kept patch would be rotated as another patch's position, the maps still plausible.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// KeepTop is a token drop: after block After only K merged tokens go on, the most attended
// (or, with Random, K at random). The zero value drops nothing. Comparable.
type KeepTop struct {
	K      int  // merged tokens kept (merge units of the page; each m x m patches)
	After  int  // the last block that runs every token
	Random bool // K chosen at random (seeded by the page size): the control
}

// None says whether the token drop keeps everything.
func (k KeepTop) None() bool { return k.K == 0 }

// Spec is the drop as the CLI takes it: "K@B", or "random:K@B" ("" none).
func (k KeepTop) Spec() string {
	if k.None() {
		return ""
	}
	s := fmt.Sprintf("%d@%d", k.K, k.After)
	if k.Random {
		s = "random:" + s
	}
	return s
}

// String names it in settings and captions: "keep the top 64 tokens after block 3".
func (k KeepTop) String() string {
	switch {
	case k.None():
		return ""
	case k.Random:
		return fmt.Sprintf("keep %d random tokens after block %d", k.K, k.After)
	}
	return fmt.Sprintf("keep the top %d tokens after block %d", k.K, k.After)
}

// ParseKeepTop reads "K@B" (the K most attended merged tokens in block B go on) or
// "random:K@B" (K at random).
func ParseKeepTop(s string) (KeepTop, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return KeepTop{}, nil
	}
	rest, random := strings.CutPrefix(s, "random:")
	k, b, ok := strings.Cut(rest, "@")
	n, err1 := strconv.Atoi(strings.TrimSpace(k))
	after, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || after < 0 {
		return KeepTop{}, fmt.Errorf("keep top %s: want K@BLOCK (the K most attended merged tokens in block BLOCK go on, e.g. 64@3), or random:K@BLOCK", QuoteShort(s))
	}
	return KeepTop{K: n, After: after, Random: random}, nil
}

// check refuses a drop the page and tower cannot run.
func (k KeepTop) check(units, depth int) error {
	switch {
	case k.None():
		return nil
	case k.After >= depth:
		return fmt.Errorf("keep top %s: the tower has blocks 0-%d", k.Spec(), depth-1)
	case k.K > units:
		return fmt.Errorf("keep top %s: the page has %d merged tokens", k.Spec(), units)
	}
	return nil
}

// choose is the kept merge units (the blocks' order, increasing) of a page of units units:
// the K most attended by received (per row), ties to the lower unit, or K at random.
func (k KeepTop) choose(received []float64, m2, units int) []int {
	order := make([]int, units)
	for u := range order {
		order[u] = u
	}
	if k.Random {
		rand.New(rand.NewPCG(0x70d5, uint64(units))).Shuffle(units, func(i, j int) { order[i], order[j] = order[j], order[i] })
	} else {
		score := make([]float64, units)
		for u := range score {
			for _, x := range received[u*m2 : (u+1)*m2] {
				score[u] += x
			}
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case score[a] > score[b]:
				return -1
			case score[a] < score[b]:
				return 1
			}
			return 0
		})
	}
	kept := slices.Clone(order[:k.K])
	slices.Sort(kept)
	return kept
}

// Name is how settings and captions name it (Intervention).
func (k KeepTop) Name() string { return k.String() }

// Effect says what it does (Intervention).
func (k KeepTop) Effect() string {
	return "the later blocks and the merger run on those merged tokens' patches only"
}

// From is the first block that runs the kept tokens only (Intervention).
func (k KeepTop) From() int { return k.After + 1 }

// Plan checks the drop against the page and tower (Intervention): the hook ranks and drops
// the tokens after block After.
func (k KeepTop) Plan(t Tower) (any, error) {
	m2 := t.MergeSize * t.MergeSize
	if err := k.check(t.Layout.Rows()/m2, t.Depth); err != nil || k.None() {
		return nil, err
	}
	return dropHook{k: k, m2: m2, units: t.Layout.Rows() / m2}, nil
}

// dropHook is a token drop planned on a page of units merge units of m2 rows.
type dropHook struct {
	k         KeepTop
	m2, units int
}

// NeedsQK: the ranking reads block After's attention.
func (d dropHook) NeedsQK(block int) bool { return !d.k.Random && block == d.k.After }

// BeforeNext ranks the units after block After (its deepstack merger saw every token) and
// makes the later blocks run the kept ones' rows.
func (d dropHook) BeforeNext(ctx context.Context, s BlockSite) error {
	if s.Block() != d.k.After {
		return nil
	}
	var received []float64
	if !d.k.Random {
		var err error
		if received, err = s.Received(ctx); err != nil {
			return err
		}
	}
	var rows []int
	for _, u := range d.k.choose(received, d.m2, d.units) {
		for j := range d.m2 {
			rows = append(rows, u*d.m2+j)
		}
	}
	return s.RunRows(rows)
}
