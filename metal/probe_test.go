//go:build linux

package metal

// probe_test.go: the start-up probe dispatches every pipeline of the library — counted on the
// harness GPU against shaders.Kernels — passes on the real kernels, runs the fallbacks where a
// family did not build, and fails, naming the kernel, where a kernel is wrong.

import (
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// every name of probeCaseNames is a case of the table.
func TestProbeCasesExist(t *testing.T) {
	got := ProbeCases()
	if len(got) != len(probeCaseNames) {
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
		}
		for _, n := range probeCaseNames {
			if !slices.Contains(names, n) {
				t.Errorf("probe case %q is not in the conformance table", n)
			}
		}
	}
}

func TestProbeDispatchesEveryKernel(t *testing.T) {
	b := newTestBackend(t)
	g := b.dev.(*harnessGPU)
	p, err := ProbePipelines(func() (backend.Backend, error) { return b, nil })
	if err != nil {
		t.Fatal(err)
	}
	all := shaders.Kernels()
	if !slices.Equal(p.Kernels, all) || len(p.Unprobed) > 0 {
		t.Errorf("the probe dispatched %d of the library's %d kernels; not: %v (unprobed %v)", len(p.Kernels), len(all), missingFrom(all, p.Kernels), p.Unprobed)
	}
	for _, k := range all { // the device really ran each, not only the backend's count
		if g.ran[k] == 0 {
			t.Errorf("the harness never ran %s", k)
		}
	}
	t.Logf("%d cases, %d kernels, %d command buffers", p.Cases, len(p.Kernels), g.passes)
}

// A GPU whose simdgroup matmul and flash attention did not build: the probe runs their
// fallbacks, and every pipeline the GPU has.
func TestProbeOnADegradedGPU(t *testing.T) {
	b := newStandInBackend(t, standIn{failUnits: []string{"matmul", "flash"}})
	p, err := ProbePipelines(func() (backend.Backend, error) { return b, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range shaders.Kernels() {
		u := shaders.UnitOf(k)
		if ran := slices.Contains(p.Kernels, k); ran == (u == "matmul" || u == "flash") {
			t.Errorf("%s (unit %s) dispatched %v", k, u, ran)
		}
	}
	if len(p.Unprobed) > 0 {
		t.Errorf("unprobed: %v", p.Unprobed)
	}
}

// A GPU whose scalar matmul (a fallback only) did not build while the simdgroup matmul did:
// Metal runs (units.go), and the probe passes without the cases that run the fallback.
func TestProbeWithoutTheFallbackUnit(t *testing.T) {
	b := newStandInBackend(t, standIn{failUnits: []string{"matmul_scalar"}})
	p, err := ProbePipelines(func() (backend.Backend, error) { return b, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Unprobed) > 0 || slices.ContainsFunc(p.Kernels, func(k string) bool { return strings.HasPrefix(k, "matmul_scalar_") }) ||
		!slices.Contains(p.Kernels, "matmul_bf16") {
		t.Errorf("kernels %v, unprobed %v", p.Kernels, p.Unprobed)
	}
}

// A wrong kernel fails the probe, and the error names it.
func TestProbeCatchesWrongKernels(t *testing.T) {
	for _, m := range []struct{ mutant, kernel string }{
		{"DROP_K_TAIL", "matmul_bf16_m32"},
		{"GELU_FORMS_SWAPPED", "gelu_tanh"},
		{"UNBIASED_VARIANCE", "layer_norm"},
		{"NO_SEGMENT_BOUND", "attention_hd72"},
	} {
		t.Run(m.mutant, func(t *testing.T) {
			b := newMutantBackend(t, standIn{}, m.mutant)
			p, err := ProbePipelines(func() (backend.Backend, error) { return b, nil })
			named := slices.ContainsFunc(p.Failures, func(f string) bool { return strings.Contains(f, "kernel "+m.kernel+":") })
			if err == nil || !named {
				t.Errorf("mutant %s: probe error %v, failures %q: want one naming kernel %s", m.mutant, err, p.Failures, m.kernel)
			}
		})
	}
}

func missingFrom(all, got []string) []string {
	var out []string
	for _, k := range all {
		if !slices.Contains(got, k) {
			out = append(out, k)
		}
	}
	return out
}
