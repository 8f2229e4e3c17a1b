package metal

// units_test.go: the build decision of units.go with compiles and pipelines that fail on
// demand — each unit in turn, pairs of them, single pipelines — and the backend's choice of
// kernel afterwards; the retry of a failed build; the GPU family probe.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// fakeBuild runs buildUnits with the units in failUnits refusing to compile and the kernels in
// noPipeline refusing a pipeline; it returns the build and how many pipelines are still held
// (made and not released).
func fakeBuild(failUnits, noPipeline []string) (builtUnits[string], int, error) {
	held := 0
	built, err := buildUnits(unitBuilder[string, string]{
		os: "macOS 15.2",
		compile: func(u shaders.Unit) (string, error) {
			if slices.Contains(failUnits, u.Name) {
				return "", fmt.Errorf("program_source:12:3: error: Apple rejects %s", u.Name)
			}
			return u.Name, nil
		},
		pipeline: func(lib, kernel string) (string, error) {
			if shaders.UnitOf(kernel) != lib {
				return "", fmt.Errorf("asked library %s for %s", lib, kernel)
			}
			if slices.Contains(noPipeline, kernel) {
				return "", fmt.Errorf("metal: pipeline %s: too many registers", kernel)
			}
			held++
			return kernel, nil
		},
		free:    func(string) {},
		release: func(string) { held-- },
	})
	return built, held, err
}

func kernelsOf(unit string) []string {
	u, _ := shaders.UnitNamed(unit)
	return u.Kernels()
}

func TestBuildDegradesPerUnit(t *testing.T) {
	for _, c := range []struct {
		name              string
		failUnits, noPipe []string
		fatal             string   // a phrase of the error, "" for a build that must succeed
		family            []string // phrases of the FamilyErrors, in order
		fallbacks         int
	}{
		{name: "everything compiles"},
		{name: "core fails", failUnits: []string{"core"},
			fatal: "compiling the core kernels (layer norm, GELU, add, rope, scalar attention) (MSL 3.1) on macOS 15.2: program_source:12:3: error: Apple rejects core"},
		{name: "matmul fails", failUnits: []string{"matmul"},
			family: []string{"matmul (simdgroup matrices) did not compile on macOS 15.2: program_source:12:3: error: Apple rejects matmul; the scalar matmul runs instead"}},
		{name: "flash fails", failUnits: []string{"flash"},
			family: []string{"flash attention (simdgroup matrices) did not compile on macOS 15.2: program_source:12:3: error: Apple rejects flash; every head dim runs the scalar attention kernel instead"}},
		{name: "the scalar matmul fails", failUnits: []string{"matmul_scalar"},
			family: []string{"the scalar matmul (the fallback of matmul (simdgroup matrices)) did not compile on macOS 15.2: program_source:12:3: error: Apple rejects matmul_scalar; matmul (simdgroup matrices) runs, with no fallback"}},
		{name: "both matmuls fail", failUnits: []string{"matmul", "matmul_scalar"},
			fatal: "on macOS 15.2 some ops have no kernel: matmul (simdgroup matrices) did not compile: program_source:12:3: error: Apple rejects matmul; and its fallback: the scalar matmul did not compile: program_source:12:3: error: Apple rejects matmul_scalar"},
		{name: "a flash pipeline fails", noPipe: []string{"attention_hd96"}, fallbacks: 1},
		{name: "a matmul pipeline fails", noPipe: []string{"matmul_f16_m32"},
			family: []string{"metal: pipeline matmul_f16_m32: too many registers; its ops run matmul_scalar_f16 instead"}},
		{name: "a matmul pipeline and its fallback's fail", noPipe: []string{"matmul_f16", "matmul_scalar_f16"},
			fatal: "metal: pipeline matmul_f16: too many registers; and its fallback: metal: pipeline matmul_scalar_f16"},
		{name: "a core pipeline fails", noPipe: []string{"layer_norm"}, fatal: "some ops have no kernel: metal: pipeline layer_norm: too many registers"},
		{name: "the scalar attention's pipeline fails", noPipe: []string{"attention"}, fatal: "some ops have no kernel: metal: pipeline attention: too many registers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			built, held, err := fakeBuild(c.failUnits, c.noPipe)
			if c.fatal != "" {
				if err == nil || !strings.Contains(err.Error(), c.fatal) {
					t.Fatalf("err = %v, want one containing %q", err, c.fatal)
				}
				if held != 0 || built.pipelines != nil {
					t.Errorf("a failed build holds %d pipelines", held)
				}
				t.Logf("error: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(built.familyErrors) != len(c.family) {
				t.Fatalf("family errors %q, want %d", built.familyErrors, len(c.family))
			}
			for i, want := range c.family {
				if !strings.Contains(built.familyErrors[i], want) {
					t.Errorf("family error %q, want %q", built.familyErrors[i], want)
				}
			}
			if len(built.fallbacks) != c.fallbacks {
				t.Errorf("fallbacks %q, want %d", built.fallbacks, c.fallbacks)
			}
			if held != len(built.pipelines) {
				t.Errorf("%d pipelines held, %d in the build", held, len(built.pipelines))
			}
			// Every op runs: a pipeline for each kernel of the library or for its fallback.
			for _, k := range shaders.Kernels() {
				_, ok := built.pipelines[k]
				_, fb := built.pipelines[shaders.FallbackKernel(k)]
				onlyFallback := strings.HasPrefix(k, "matmul_scalar_")
				if !ok && !fb && !onlyFallback {
					t.Errorf("%s: no pipeline and no fallback", k)
				}
				if failed := slices.Contains(c.failUnits, shaders.UnitOf(k)) || slices.Contains(c.noPipe, k); ok == failed {
					t.Errorf("%s: pipeline %v, but its unit or pipeline failed: %v", k, ok, failed)
				}
			}
		})
	}
}

// The backend over a build without the simdgroup matmul encodes the scalar kernels, split by
// their own cost; without flash, the scalar attention; and WithoutFamily does the same on a
// GPU that has everything, until restored.
func TestBackendRunsTheFallbackKernels(t *testing.T) {
	for _, c := range []struct {
		failUnits []string
		without   string
	}{{failUnits: []string{"matmul", "flash"}}, {without: "matmul"}, {without: "flash"}, {}} {
		built, _, err := fakeBuild(c.failUnits, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := newTestModel(t, slowestGPU)
		m.b.dev = &builtGPU{m.b.dev, built}
		if c.without != "" {
			restore, err := m.b.WithoutFamily(c.without)
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
		}
		x, y := m.buf(1000*72), m.buf(1000*970)
		m.b.MatMul(y, x, m.weight(970*72), m.weight(970), 1000, 72, 970)
		m.b.MatMul(y, x, m.weight(33*72), m.weight(33), 7, 72, 33)
		m.b.Attention(y, x, x, x, 72*2, []backend.Segment{{Start: 0, End: 100}}, 2, 72, 0.1)
		var kernels []string
		for _, r := range m.log.Records {
			if !slices.Contains(kernels, r.Kernel) {
				kernels = append(kernels, r.Kernel)
			}
		}
		noMatmul := slices.Contains(c.failUnits, "matmul") || c.without == "matmul"
		noFlash := slices.Contains(c.failUnits, "flash") || c.without == "flash"
		want := []string{"matmul_bf16", "matmul_bf16_m32", "attention_hd72"}
		if noMatmul {
			want[0], want[1] = "matmul_scalar_bf16", "matmul_scalar_bf16"
		}
		if noFlash {
			want[2] = "attention"
		}
		want = slices.Compact(want)
		if !slices.Equal(kernels, want) {
			t.Errorf("%+v: dispatched %v, want %v", c, kernels, want)
		}
	}
	// A family without a fallback, or whose fallback is missing, cannot be done without.
	m := newTestModel(t, slowestGPU)
	if _, err := m.b.WithoutFamily("core"); err == nil {
		t.Error("WithoutFamily(core) succeeded")
	}
	built, _, err := fakeBuild([]string{"matmul_scalar"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.b.dev = &builtGPU{m.b.dev, built}
	if _, err := m.b.WithoutFamily("matmul"); err == nil || !strings.Contains(err.Error(), "matmul_scalar_") {
		t.Errorf("WithoutFamily(matmul) with no scalar matmul: %v", err)
	}
	// restore undoes it, once however often it is called.
	restore, err := m.b.WithoutFamily("flash")
	if err != nil {
		t.Fatal(err)
	}
	restore()
	restore()
	if !m.b.has("attention_hd72") || m.b.without["flash"] != 0 {
		t.Errorf("after restore: has(attention_hd72) %v, without %v", m.b.has("attention_hd72"), m.b.without)
	}
}

// builtGPU is a gpu with the pipelines of a build (the model GPU has every kernel).
type builtGPU struct {
	gpu
	built builtUnits[string]
}

func (g *builtGPU) supports(k string) bool { _, ok := g.built.pipelines[k]; return ok }

func (g *builtGPU) encode(d shaders.Dispatch) {
	if !g.supports(d.Kernel) {
		panic("encoded " + d.Kernel + " without a pipeline")
	}
	g.gpu.encode(d)
}

// A failed build is not kept: the next call builds again; a successful one is kept.
func TestFailedBuildIsRetried(t *testing.T) {
	calls := 0
	o := onceOK[int]{make: func() (int, error) {
		calls++
		if calls == 1 {
			return 0, errors.New("the compiler service did not answer")
		}
		return 42, nil
	}}
	if _, err := o.get(); err == nil {
		t.Fatal("the first build's error was not returned")
	}
	for range 3 {
		if v, err := o.get(); err != nil || v != 42 {
			t.Fatalf("get() = %v, %v after a failed build, want a new build's 42", v, err)
		}
	}
	if calls != 2 {
		t.Errorf("%d builds, want 2 (the failed one, then one kept)", calls)
	}
}

// The family probe starts at the newest family Apple defines and sends no other value.
func TestHighestAppleFamily(t *testing.T) {
	for _, c := range []struct {
		upTo int
		want string
	}{{1009, "Apple9"}, {1007, "Apple7"}, {1011, "Apple11"}, {0, ""}} {
		var probed []int
		got := highestAppleFamily(func(f int) bool {
			probed = append(probed, f)
			return f <= c.upTo
		})
		if got != c.want {
			t.Errorf("a GPU up to %d: %q, want %q", c.upTo, got, c.want)
		}
		for _, f := range probed {
			if f < 1001 || f > 1011 {
				t.Errorf("probed %d, which Apple does not define as an AppleN family", f)
			}
		}
		if len(probed) == 0 || probed[0] != 1011 {
			t.Errorf("the probe started at %v, want the newest family (Apple11 = 1011)", probed)
		}
	}
}
