package selftest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/metal"
)

// selftest passes on this machine, checks every op and both towers in both modes, and
// off macOS says why Metal is skipped.
func TestSelftest(t *testing.T) {
	var out bytes.Buffer
	err := Run(&out, Options{Which: "all", NoTimes: true})
	text := out.String()
	if err != nil && strings.Contains(text, "METAL WAS NOT TESTED") && isUnsupported(metal.Check()) {
		// An Apple-silicon Mac whose GPU cannot run the kernels (macOS before 14, a virtual
		// machine's GPU): selftest fails on purpose there, saying why; the rest must pass.
		t.Logf("Metal cannot run on this Mac (%v): selftest says so and exits non-zero, as it must", metal.Check())
	} else if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, want := range []string{"Attention (", "MatMul (", "GELU (", "demo (f32) on the sample photo, pread", "image + video, mapped", " 0 failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("selftest output lacks %q:\n%s", want, text)
		}
	}
	if !metalOnThisMachine() && !strings.Contains(text, "skipped: metal is not supported here: the Metal backend needs macOS") {
		t.Errorf("selftest does not say why Metal is skipped:\n%s", text)
	}
	if strings.Contains(text, "FAIL") {
		t.Errorf("a check failed:\n%s", text)
	}
}

// wrongGELU computes the other GELU form; panicky panics in attention.
type wrongGELU struct{ *cpu.Backend }

func (b wrongGELU) GELU(x backend.View, n int, form backend.GELUForm) { b.Backend.GELU(x, n, 1-form) }

type panicky struct{ *cpu.Backend }

func (panicky) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	panic("kernel exploded")
}

// A wrong or crashing backend is reported as failed checks, and the command fails.
func TestSelftestReportsFailures(t *testing.T) {
	towers, cleanup, err := selftestTowers()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for _, c := range []struct {
		name string
		be   func() (backend.Backend, error)
		want []string
	}{
		{"wrong gelu", func() (backend.Backend, error) { return wrongGELU{cpu.New(1)}, nil }, []string{"GELU/tanh", "FAIL"}},
		{"panicking attention", func() (backend.Backend, error) { return panicky{cpu.New(1)}, nil }, []string{"Attention/heads3/hd72", "FAIL", "panic: kernel exploded"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			st := &selftest{w: &out}
			st.section("test")
			st.ops(c.be)
			for _, tw := range towers {
				st.record(towerCheck(tw, engine.Mapped, c.be, 1e-5))
			}
			if st.report.Failed == 0 {
				t.Fatalf("no check failed:\n%s", out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			t.Logf("%d checks failed", st.report.Failed)
		})
	}
}
