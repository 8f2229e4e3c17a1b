package conformance

// guard.go: what a case checks beyond the numbers. Every buffer a case allocates (Suite.Alloc,
// Suite.Upload) is surrounded by a band of guardLen sentinel floats on each side, inside the
// same backend buffer; after the case, each band must still hold the sentinel, and the output
// must be finite. So an op that writes past (or before) its output — a wrong grid, a missing
// bounds check in a kernel — and an op that produces NaN or Inf fail their case with a sentence
// that says which, not with a number that JSON cannot carry.
//
// The bands are 16 floats (64 bytes): every view keeps the 16-byte alignment it would have at
// the start of its own buffer, so a kernel's vector path sees the same alignment as without
// them. The sentinel is finite (a kernel that reads a band by mistake computes a wrong,
// finite number, which the reference catches; a NaN there could also be masked out and pass).
//
// Invariant: every buffer of a case is checked, and a case whose output holds a non-finite
// value or whose bands changed is never OK, whatever its relative error. Mutation that would
// silently break it: checking only the band after the output — an op that writes one row
// early (a negative offset) would pass.

import (
	"fmt"
	"math"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
)

const guardLen = 16

// guardValue is the sentinel of the bands: exact in float32, far from any case's values.
const guardValue = float32(-7777.25)

// guardedBuffer is a buffer of a case: n floats between two bands, the view at its start.
type guardedBuffer struct {
	start backend.View // the first band
	n     int
}

// Alloc allocates n zeroed floats of be between two guard bands (a failure panics).
func (s *Suite) Alloc(be backend.Backend, n int) backend.View {
	v := Alloc(be, n+2*guardLen)
	band := make([]float32, guardLen)
	for i := range band {
		band[i] = guardValue
	}
	be.Upload(v, band)
	be.Upload(v.At(guardLen+n), band)
	s.guards = append(s.guards, guardedBuffer{v, n})
	return v.At(guardLen)
}

// Upload allocates a guarded buffer of be holding vals.
func (s *Suite) Upload(be backend.Backend, vals []float32) backend.View {
	v := s.Alloc(be, len(vals))
	be.Upload(v, vals)
	return v
}

// outOfBounds is what a case returns when it found the op wrote where it must not inside its
// own buffer (a view's neighbours it checks itself): Check reports it as such.
func (s *Suite) outOfBounds() ([]float32, []float64) {
	s.outside = true
	return nil, nil
}

// startCase forgets the previous case's buffers.
func (s *Suite) startCase() {
	s.guards, s.outside = s.guards[:0], false
}

// defect says what is wrong with a case beyond its relative error: a non-finite output, a
// write outside the output; "" when nothing is.
func (s *Suite) defect(be backend.Backend, got []float32) string {
	if d := NonFinite(got); d != "" {
		return d
	}
	if s.outside {
		return "the op wrote outside its output (into the elements beside it)"
	}
	for _, g := range s.guards {
		all := Download(be, g.start, g.n+2*guardLen)
		for i := 0; i < guardLen; i++ {
			if all[i] != guardValue {
				return fmt.Sprintf("the op wrote outside its output (%d before the start of a buffer of %d floats)", guardLen-i, g.n)
			}
		}
		for i := guardLen + g.n; i < len(all); i++ {
			if all[i] != guardValue {
				return fmt.Sprintf("the op wrote outside its output (%d after the end of a buffer of %d floats)", i-guardLen-g.n+1, g.n)
			}
		}
	}
	return ""
}

// NonFinite says which non-finite values got holds — "the output holds NaN (3 of 40 values,
// the first at element 7)" — or "" when all are finite.
func NonFinite(got []float32) string {
	nan, posInf, negInf, first := 0, 0, 0, -1
	for i, v := range got {
		f := float64(v)
		switch {
		case math.IsNaN(f):
			nan++
		case math.IsInf(f, 1):
			posInf++
		case math.IsInf(f, -1):
			negInf++
		default:
			continue
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return ""
	}
	var kinds []string
	for _, k := range []struct {
		n    int
		name string
	}{{nan, "NaN"}, {posInf, "+Inf"}, {negInf, "-Inf"}} {
		if k.n > 0 {
			kinds = append(kinds, k.name)
		}
	}
	return fmt.Sprintf("the output holds %s (%d of %d values, the first at element %d)",
		strings.Join(kinds, " and "), nan+posInf+negInf, len(got), first)
}
