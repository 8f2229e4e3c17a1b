// Package probe is everything the inspector measures on a run besides its outputs: what a
// run keeps for it (Store: per block, the post-rope q|k rows and the output), attention rows
// and rollout and head statistics computed from the kept q|k (attention.go), and activation
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
	"sync"

	"github.com/turbospark/inspector/engine/geom"
)

// Store is what a run keeps for the probes.
type Store struct {
	Layout                 *geom.Layout
	Heads, HeadDim, Hidden int

	mu      sync.RWMutex
	qk      [][]float32 // per block [S, 2D]: post-rope q (D) then k (D) per row
	outputs [][]float32 // per block [S, D]
}

// NewStore is an empty store for a page laid out as lay, in a tower of heads x headDim.
func NewStore(lay *geom.Layout, heads, headDim int) *Store {
	return &Store{Layout: lay, Heads: heads, HeadDim: headDim, Hidden: heads * headDim}
}

// AddQK keeps the next block's post-rope q|k rows ([S, 2D]; the store owns them now).
func (s *Store) AddQK(qk []float32) {
	s.mu.Lock()
	s.qk = append(s.qk, qk)
	s.mu.Unlock()
}

// AddOutput keeps the next block's output ([S, D]; the store owns it now).
func (s *Store) AddOutput(out []float32) {
	s.mu.Lock()
	s.outputs = append(s.outputs, out)
	s.mu.Unlock()
}

// KeptQK is how many blocks have their q|k kept.
func (s *Store) KeptQK() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.qk)
}

// QK is block's post-rope q|k rows, [S, 2D]; read only.
func (s *Store) QK(block int) ([]float32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if block < 0 || block >= len(s.qk) {
		return nil, fmt.Errorf("attention of block %d is not kept (%d blocks kept; run with attention kept)", block, len(s.qk))
	}
	return s.qk[block], nil
}

// Output is block's output, [S, D]; read only.
func (s *Store) Output(block int) ([]float32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if block < 0 || block >= len(s.outputs) {
		return nil, fmt.Errorf("output of block %d is not kept (%d blocks kept; run with outputs kept)", block, len(s.outputs))
	}
	return s.outputs[block], nil
}

// Outputs is every kept block output so far, in block order; read only.
func (s *Store) Outputs() [][]float32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([][]float32(nil), s.outputs...)
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
