// Package conformance holds every backend — the CPU and Metal alike — to one table of op
// cases against float64 references written as the plainest loops (reference.go): shapes no
// multiple of any blocking, views at element offsets, F32, BF16 and F16 weights at aligned
// and misaligned byte offsets, uneven attention segments (one of a single row), head dims
// 6 to 80, logits past 100. engine/cpu's and metal's tests run it (metal's through the C++
// kernel harness on Linux, on the GPU on a Mac), and `inspector selftest` runs it on the
// user's machine.
//
// Invariant: the reference of every case is computed from the host inputs and the weight
// bytes as stored (widened by dtype.DecodeF32), never from anything the backend produced.
// Mutation that would silently break it: building a reference from the backend's download —
// a wrong kernel would agree with itself.
package conformance

import (
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// Result is one case: its name, the relative error against the reference, its tolerance,
// and a failure (a panic or an error of the backend), if any.
type Result struct {
	Name   string
	RelErr float64 // +Inf where Defect is set
	Tol    float64
	Err    error
	// Defect says what was wrong beyond a number: the output holds NaN or Inf, or the op wrote
	// outside its output (guard.go). "" when neither.
	Defect string
}

// OK says whether the case passed.
func (r Result) OK() bool { return r.Err == nil && r.Defect == "" && r.RelErr <= r.Tol }

// Run makes a backend with newBackend, runs every case on it, and closes it before the
// weight memory is unmapped (a GPU backend wraps that memory without copying).
func Run(newBackend func() (backend.Backend, error)) (out []Result, err error) {
	err = withBackend(newBackend, func(s *Suite, be backend.Backend) {
		for _, c := range Cases() {
			out = append(out, c.Check(s, be))
		}
	})
	return out, err
}

// withBackend runs f on a new backend and a new suite, then closes the backend before the
// suite unmaps the weights.
func withBackend(newBackend func() (backend.Backend, error), f func(*Suite, backend.Backend)) error {
	be, err := newBackend()
	if err != nil {
		return err
	}
	s := NewSuite()
	defer s.Close()
	defer be.Close()
	f(s, be)
	return nil
}

// Suite owns the weight memory of the cases run with it: page-aligned anonymous mappings,
// like the residency's, unmapped by Close — after the backends that used them closed. It
// also keeps the guard bands of the case being checked (guard.go).
type Suite struct {
	mems    [][]byte
	guards  []guardedBuffer
	outside bool // the case saw a write outside its output itself (outOfBounds)
}

// NewSuite is an empty suite.
func NewSuite() *Suite { return &Suite{} }

// Close unmaps every weight region.
func (s *Suite) Close() {
	for _, m := range s.mems {
		unix.Munmap(m)
	}
	s.mems = nil
}

var regionIDs atomic.Int64

// region is n bytes of page-aligned memory outside the Go heap, as a Region.
func (s *Suite) region(raw []byte, mapped bool) *backend.Region {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, (max(len(raw), 1)+page-1)/page*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("conformance: weight memory of %d bytes: %v", len(raw), err))
	}
	s.mems = append(s.mems, mem)
	copy(mem, raw)
	return &backend.Region{ID: 1<<30 + int(regionIDs.Add(1)), Bytes: mem[:len(raw)], Mapped: mapped}
}

// Weight encodes vals as dtype d at byte offset skew inside a region of its own, and
// returns the weight with the values a reference must use (vals rounded to d).
func (s *Suite) Weight(name string, vals []float32, d dtype.DType, skew int, shape ...int) (backend.Weight, []float32) {
	raw := dtype.EncodeF32(make([]byte, skew, skew+len(vals)*d.Size()), vals, d)
	w := backend.Weight{Name: name, DType: d, Shape: shape, Region: s.region(raw, true), Offset: skew}
	return w, RefWiden(w)
}
