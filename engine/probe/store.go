// Package probe is everything the inspector measures on a run besides its outputs: what a
// run keeps for it (Store: per block, the kept taps — the output, the post-rope q|k rows and
// any other named intermediate the run was asked to keep), attention rows
// and rollout and head statistics computed from the kept q|k (attention.go), the rollout of
// every query at once, extended as blocks finish (rollouttable.go), and activation
// statistics (stats.go). The engine fills a Store as blocks finish; the window, the dump and
// the CLI read it, at the same time as the run steps.
package probe

// store.go: the kept tensors, appended block by block, read concurrently.
//
// Invariant: a slice handed to the Store is never written again (the run downloads a fresh
// one per block), so readers may keep what they got after the lock is released; the lock
// only guards the lists. Mutation that would silently break it: the run reusing one
// download buffer for every block — every kept block would show the last block's values.

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/turbospark/inspector/engine/geom"
)

// Store is what a run keeps for the probes: per block, each kept tap by name (engine/tower/tap.go).
// q and k are kept together as one q|k [S, 2D] (what the attention rows score) and served
// as the taps "q" and "k"; the block output is the tap "out".
type Store struct {
	Layout                 *geom.Layout
	Heads, HeadDim, Hidden int

	// Views is what each block ran over (geom.Views: the keys it saw, the rows it ran), as
	// the run's interventions shaped it; nil: every block ran every row and saw every key.
	// Set before the first block is kept.
	Views *geom.Views
	mu    sync.RWMutex
	qk    [][]float32            // per block [S, 2D]: post-rope q (D) then k (D) per row
	taps  map[string][][]float32 // per tap name, per block [S, W]
	names []string               // the kept taps, in the order first added (the graph's)
}

// The taps the Store knows by name.
const (
	TapOut = "out" // the block output
	TapQ   = "q"   // post-rope q, the first half of each q|k row
	TapK   = "k"   // post-rope k, the second half
)

// NewStore is an empty store for a page laid out as lay, in a tower of heads x headDim.
func NewStore(lay *geom.Layout, heads, headDim int) *Store {
	return &Store{Layout: lay, Heads: heads, HeadDim: headDim, Hidden: heads * headDim, taps: map[string][][]float32{}}
}

// view is block's view of the page (every row, every key without Views).
func (s *Store) view(block int) geom.View {
	if s.Views == nil {
		return geom.View{}
	}
	return s.Views.Of(block)
}

// maskedKeys is block's key rows no query saw (nil: none): masked, or dropped before it.
func (s *Store) maskedKeys(block int) []bool { return s.view(block).Masked }

// register lists name among the kept taps the first time it is added. Callers hold mu.
func (s *Store) register(names ...string) {
	for _, n := range names {
		if !slices.Contains(s.names, n) {
			s.names = append(s.names, n)
		}
	}
}

// AddQK keeps the next block's post-rope q|k rows ([S, 2D]; the store owns them now).
func (s *Store) AddQK(qk []float32) {
	s.mu.Lock()
	s.register(TapQ, TapK)
	s.qk = append(s.qk, qk)
	s.mu.Unlock()
}

// AddTap keeps the next block's value of the tap name ([S, W]; the store owns it now).
// q and k are added together by AddQK.
func (s *Store) AddTap(name string, x []float32) {
	s.mu.Lock()
	s.register(name)
	s.taps[name] = append(s.taps[name], x)
	s.mu.Unlock()
}

// ShareFirst makes this (empty) store hold base's kept taps of blocks 0..blocks-1, the same
// slices (read only, as every kept tap is): a run that resumes from base's state (an
// intervention later in the tower) keeps what base kept before it. It fails if base kept
// fewer blocks of a tap this store would keep (keep lists the tap names, q and k as TapQ).
func (s *Store) ShareFirst(base *Store, blocks int, keep []string) error {
	base.mu.RLock()
	defer base.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.qk) > 0 || len(s.taps) > 0 {
		return fmt.Errorf("share: the store already holds taps")
	}
	for _, name := range keep {
		switch name {
		case TapK:
		case TapQ:
			if len(base.qk) < blocks {
				return fmt.Errorf("share: q|k kept for %d blocks, %d wanted", len(base.qk), blocks)
			}
			s.register(TapQ, TapK)
			s.qk = append(s.qk, base.qk[:blocks]...)
		default:
			if len(base.taps[name]) < blocks {
				return fmt.Errorf("share: tap %s kept for %d blocks, %d wanted", name, len(base.taps[name]), blocks)
			}
			s.register(name)
			s.taps[name] = append(s.taps[name], base.taps[name][:blocks]...)
		}
	}
	return nil
}

// AddOutput keeps the next block's output ([S, D]; the store owns it now).
func (s *Store) AddOutput(out []float32) { s.AddTap(TapOut, out) }

// Taps names the kept taps, in graph order.
func (s *Store) Taps() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.names)
}

// Kept is how many blocks have the tap name kept.
func (s *Store) Kept(name string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if name == TapQ || name == TapK {
		return len(s.qk)
	}
	return len(s.taps[name])
}

// KeptQK is how many blocks have their q|k kept.
func (s *Store) KeptQK() int { return s.Kept(TapQ) }

// QK is block's post-rope q|k rows, [S, 2D]; read only.
func (s *Store) QK(block int) ([]float32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if block < 0 || block >= len(s.qk) {
		return nil, fmt.Errorf("attention of block %d is not kept (%d blocks kept; run with attention kept)", block, len(s.qk))
	}
	return s.qk[block], nil
}

// Tap is block's value of the tap name, [S, W] (W = len/S); read only, but q and k are
// copied out of the kept q|k rows.
func (s *Store) Tap(name string, block int) ([]float32, error) {
	if name == TapQ || name == TapK {
		return s.qkHalf(name == TapK, block)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	kept := s.taps[name]
	if block < 0 || block >= len(kept) {
		what, keep := "tap "+name, "the tap "+name
		if name == TapOut {
			what, keep = "output", "outputs"
		}
		return nil, fmt.Errorf("%s of block %d is not kept (%d blocks kept; run with %s kept)", what, block, len(kept), keep)
	}
	return kept[block], nil
}

// qkHalf copies q (or k) out of block's q|k rows: [S, D].
func (s *Store) qkHalf(k bool, block int) ([]float32, error) {
	qk, err := s.QK(block)
	if err != nil {
		return nil, err
	}
	D, off := s.Hidden, 0
	if k {
		off = s.Hidden
	}
	out := make([]float32, len(qk)/2)
	for r := range len(out) / D {
		copy(out[r*D:(r+1)*D], qk[r*2*D+off:][:D])
	}
	return out, nil
}

// Output is block's output, [S, D]; read only.
func (s *Store) Output(block int) ([]float32, error) { return s.Tap(TapOut, block) }

// Outputs is every kept block output so far, in block order; read only.
func (s *Store) Outputs() [][]float32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.taps[TapOut])
}

// AttentionRow is softmax(q_query . K^T * scale) of one head of one block, [S] in sequence
// order, zero outside the query's segment.
func (s *Store) AttentionRow(block, head, query int) ([]float32, error) {
	if head < 0 || head >= s.Heads {
		return nil, fmt.Errorf("head %d outside %d heads", head, s.Heads)
	}
	var row []float32
	err := s.AttentionRows(context.Background(), block, head, []int{query}, func(_ int, r []float32) { row = r })
	return row, err
}
