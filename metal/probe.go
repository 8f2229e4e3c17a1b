package metal

// probe.go: the start-up probe's check of the kernels. Before the window (or `run`) touches
// Metal in its own process, a child process compiles the library and runs a few conformance
// cases on tiny shapes that together dispatch every pipeline the device made — the simdgroup
// and scalar matmuls of every weight dtype, every flash head dim, the norms, rope, the GELUs,
// the element-wise ops — each against its float64 reference, loosely (probeSlack). An
// Objective-C exception or a libffi abort in any first dispatch then kills the child, not the
// window, and a kernel that computes garbage on this GPU starts the window on the CPU with the
// reason instead of drawing wrong maps. `selftest` holds the same kernels to the strict
// tolerances.
//
// Invariant: the probe's cases dispatch every kernel of the library on a GPU that built them
// all (TestProbeDispatchesEveryKernel counts them against shaders.Kernels on the harness), and
// a case that fails — an error, a NaN, a write outside its output, an error past the tolerance
// — fails the probe. Mutation that would silently break it: a probe that only dispatches
// add_into (as the first pass does) — the first matmul, flash, rope or norm dispatch would happen
// in the window's process.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/shaders"
)

// probeSlack is how far past a case's own tolerance the probe lets it go: the probe finds
// kernels that are wrong, selftest measures how right they are. Not more: the GELU forms differ
// by 5e-5 of the largest value (tanh for erf is the mutation that keeps every shape).
const probeSlack = 10

// probeCaseNames are the conformance cases the probe runs (Cases' names). The 64-row matmuls
// need a grid past the small-grid switch (1,000 rows); their k of 9 keeps the references cheap.
var probeCaseNames = []string{
	"MatMul/F32/rows7/in72/out33/biastrue/skew0",
	"MatMul/BF16/rows7/in72/out33/biastrue/skew0",
	"MatMul/F16/rows7/in72/out33/biastrue/skew0",
	"MatMulEpilogue/F32/rows1000/in9/out970/gelutrue-erf/residualtrue",
	"MatMulEpilogue/BF16/rows1000/in9/out970/gelutrue-erf/residualtrue",
	"MatMulEpilogue/F16/rows1000/in9/out970/gelutrue-erf/residualtrue",
	"MatMul/F32/rows130/in100/out70/biastrue/skew0/without-matmul",
	"MatMul/BF16/rows130/in100/out70/biastrue/skew0/without-matmul",
	"MatMul/F16/rows130/in100/out70/biastrue/skew0/without-matmul",
	"LayerNorm/BF16/rows7/cols72/skew0",
	"RMSNorm/BF16/rows7/cols72/skew0",
	"GELU/tanh/n1000",
	"GELU/erf/n1000",
	"GELU/quick/n1000",
	"GELU/silu/n1000",
	"Add/n1000/inplacefalse",
	"Mul/n1000/inplacefalse",
	"FillColumns/rows7/stride64/cols16-32/meantrue",
	"Rope2D/seq7/heads3/hd16/ktrue",
	"Attention/heads3/hd6/segs[{0 1 0 0} {1 8 0 0} {8 41 0 0} {41 44 0 0}]",
	"Attention/heads3/hd16/segs[{0 1 0 0} {1 8 0 0} {8 41 0 0} {41 44 0 0}]",
	"Attention/heads2/hd32/segs[{0 3 0 0} {3 70 0 0} {70 71 0 0}]",
	"Attention/heads3/hd64/segs[{0 1 0 0} {1 8 0 0} {8 41 0 0} {41 44 0 0}]",
	"Attention/heads3/hd72/segs[{0 1 0 0} {1 8 0 0} {8 41 0 0} {41 44 0 0}]",
	"Attention/heads2/hd80/segs[{0 3 0 0} {3 40 0 0} {40 41 0 0}]",
	"Attention/heads2/hd96/segs[{0 3 0 0} {3 70 0 0} {70 71 0 0}]",
	"Attention/heads2/hd128/segs[{0 3 0 0} {3 70 0 0} {70 71 0 0}]",
}

// ProbeCases are the probe's conformance cases, in the table's order.
func ProbeCases() []conformance.Case {
	var out []conformance.Case
	for _, c := range conformance.Cases() {
		if slices.Contains(probeCaseNames, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// PipelineProbe is what the probe ran.
type PipelineProbe struct {
	Cases int
	// Kernels are the kernels dispatched (a Metal backend's; nil for another backend).
	Kernels []string
	// Unprobed are kernels the device has a pipeline for that no probe case dispatched (none
	// where the library and probeCaseNames agree).
	Unprobed []string
	// Failures are the cases that failed, each with the kernels it dispatched and why (the
	// error names the first two).
	Failures []string
}

// ProbePipelines runs the probe's cases on a backend made by newBackend (closed before the
// cases' weight memory is unmapped) and returns an error naming every case that failed and
// the kernels it dispatched.
func ProbePipelines(newBackend func() (backend.Backend, error)) (PipelineProbe, error) {
	var p PipelineProbe
	be, err := newBackend()
	if err != nil {
		return p, err
	}
	s := conformance.NewSuite()
	defer s.Close()
	defer be.Close()
	mb, _ := be.(*Backend)
	for _, c := range ProbeCases() {
		if family, ok := fallbackFamily(c.Name); ok && mb != nil && mb.canRunWithout(family) != nil {
			continue // its fallback did not build here, while the family did: nothing runs it (units.go)
		}
		before := mb.dispatchCounts()
		r := c.Check(s, be)
		p.Cases++
		why := ""
		switch {
		case r.Err != nil:
			why = r.Err.Error()
		case r.Defect != "":
			why = r.Defect
		case !(r.RelErr <= probeSlack*c.Tol):
			why = fmt.Sprintf("relative error %.2g against the float64 reference (the probe allows %.0e)", r.RelErr, probeSlack*c.Tol)
		default:
			continue
		}
		if ran := mb.dispatchedSince(before); len(ran) > 0 {
			why = fmt.Sprintf("kernel %s: %s", strings.Join(ran, ", "), why)
		}
		p.Failures = append(p.Failures, fmt.Sprintf("%s (%s)", why, c.Name))
	}
	if mb != nil {
		counts := mb.dispatchCounts()
		for _, k := range shaders.Kernels() {
			switch {
			case counts[k] > 0:
				p.Kernels = append(p.Kernels, k)
			case mb.dev.supports(k):
				p.Unprobed = append(p.Unprobed, k)
			}
		}
	}
	if n := len(p.Failures); n > 0 {
		shown, more := p.Failures, ""
		if n > 2 { // a status line's worth; selftest lists them all
			shown, more = shown[:2], fmt.Sprintf("; and %d more (inspector selftest lists them)", n-2)
		}
		return p, fmt.Errorf("%d of the %d kernel checks failed: %s%s", n, p.Cases, strings.Join(shown, "; "), more)
	}
	return p, nil
}

// fallbackFamily is the family a conformance.Fallback case runs without ("matmul" of
// ".../without-matmul").
func fallbackFamily(name string) (string, bool) {
	i := strings.LastIndex(name, "/without-")
	if i < 0 {
		return "", false
	}
	return name[i+len("/without-"):], true
}

// dispatchCounts is a copy of the dispatches per kernel so far (nil for a nil backend).
func (b *Backend) dispatchCounts() map[string]int {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.dispatched))
	for k, n := range b.dispatched {
		out[k] = n
	}
	return out
}

// dispatchedSince lists, sorted, the kernels dispatched since before was taken.
func (b *Backend) dispatchedSince(before map[string]int) []string {
	var out []string
	for k, n := range b.dispatchCounts() {
		if n > before[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
