package selftest

// selftest_fault_test.go: a GPU that computes garbage, or that dies before any check can run,
// never reads as a pass. Through the stand-in GPU (INSPECTOR_TEST_GPU=cpu-standin) and the
// fault hook (INSPECTOR_TEST_FAULT, testhooks.go): outputs holding NaN or +Inf and writes past
// an op's output are FAIL lines naming what happened, counted in the summary, written into
// --report as failed (valid JSON) and a non-zero exit; a child that loses a check's record
// fails that check; a GPU whose children die at the set-up (or at their first check, twice)
// stops the section with one FAIL and the rest counted as not run.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/metal"
	"github.com/turbospark/inspector/shaders"
)

// selftestRun is one `selftest --backend metal` of the stand-in GPU with fault.
type selftestRun struct {
	text    string
	exit    int
	report  Report
	elapsed time.Duration
}

func runStandinSelftest(t *testing.T, bin, fault string, more ...string) selftestRun {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(bin, "selftest", "--backend", metal.Name, "--no-times", "--report", report)
	cmd.Env = probeEnv(t, t.TempDir(), fault, more...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := selftestRun{text: string(out), elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("%s: no report: %v\n%s", fault, err, out)
	}
	if err := json.Unmarshal(b, &r.report); err != nil {
		t.Fatalf("%s: the report is not valid JSON: %v\n%s", fault, err, b)
	}
	return r
}

// failLines are the FAIL lines of a selftest's output.
func failLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, " FAIL ") {
			out = append(out, l)
		}
	}
	return out
}

// failedChecks are the report's failed checks, by name.
func failedChecks(rep Report) map[string]checkRecord {
	out := map[string]checkRecord{}
	for _, s := range rep.Sections {
		for _, c := range s.Checks {
			if !c.OK {
				out[strings.TrimSpace(c.Name)] = c
			}
		}
	}
	return out
}

func TestSelftestNonFiniteAndStrayOutputsFail(t *testing.T) {
	bin := buildInspector(t)
	for _, c := range []struct {
		fault   string
		checks  []string // the checks that must fail, and no others
		says    string
		nonFin  bool // a conformance case: its rel_err travels as non_finite text
		summary string
	}{
		{"MatMul/F32/rows7/in72/out33/biastrue:nan", []string{"MatMul/F32/rows7/in72/out33/biastrue/skew0"}, "the output holds NaN", true, " 1 failed"},
		{"LayerNorm/BF16/rows33/cols72:inf", []string{"LayerNorm/BF16/rows33/cols72/skew0"}, "the output holds +Inf", true, " 1 failed"},
		{"GELU/erf/n1000:oob", []string{"GELU/erf/n1000"}, "the op wrote outside its output (1 after the end", true, " 1 failed"},
		{"Attention/heads3/hd16/segs[{0 1 0 0}:oob", []string{"Attention/heads3/hd16/segs[{0 1 0 0} {1 8 0 0} {8 41 0 0} {41 44 0 0}]"}, "wrote outside its output", true, " 1 failed"},
		{"sample photo, mapped:nan", []string{"demo (f32) on the sample photo, mapped"}, "blocks.0.out: holds NaN", false, " 1 failed"},
		{"image + video, pread:inf", []string{"tiny qwen3.5 (bf16, hd 72), image + video, pread"}, "blocks.0.out: holds", false, " 1 failed"}, // +Inf, then NaN after a norm
	} {
		r := runStandinSelftest(t, bin, c.fault)
		if r.exit == 0 {
			t.Errorf("%s: selftest exited 0:\n%s", c.fault, r.text)
		}
		fails := failLines(r.text)
		if len(fails) != len(c.checks) {
			t.Errorf("%s: %d FAIL lines, want %d:\n%s", c.fault, len(fails), len(c.checks), strings.Join(fails, "\n"))
		}
		for _, name := range c.checks {
			found := false
			for _, l := range fails {
				found = found || (strings.Contains(l, name) && strings.Contains(l, c.says))
			}
			if !found {
				t.Errorf("%s: no FAIL line for %s saying %q:\n%s", c.fault, name, c.says, r.text)
			}
			rec, ok := failedChecks(r.report)[name]
			if !ok || !strings.Contains(rec.Error, c.says) {
				t.Errorf("%s: the report's record of %s: %+v (present %v)", c.fault, name, rec, ok)
			}
			if c.nonFin && rec.NonFinite != "rel_err +Inf" {
				t.Errorf("%s: non_finite %q, want the rel_err's +Inf said in text", c.fault, rec.NonFinite)
			}
		}
		if !strings.Contains(r.text, c.summary) || r.report.Failed != len(c.checks) {
			t.Errorf("%s: summary / report failed %d, want %q:\n%s", c.fault, r.report.Failed, c.summary, r.text)
		}
	}
}

// A check whose result never reaches the parent (a lost record) is a FAIL, not one case fewer.
func TestSelftestUnreportedCheckFails(t *testing.T) {
	bin := buildInspector(t)
	r := runStandinSelftest(t, bin, "Mul/n1000/inplacefalse:mute")
	fails := failLines(r.text)
	if r.exit == 0 || len(fails) != 1 || !strings.Contains(fails[0], "Mul/n1000/inplacefalse") || !strings.Contains(fails[0], "no result reported") {
		t.Errorf("exit %d, FAIL lines %q:\n%s", r.exit, fails, r.text)
	}
	if r.report.Failed != 1 {
		t.Errorf("report: %d failed", r.report.Failed)
	}
}

// A GPU that kills every child at its first check, or the set-up, stops the section at once:
// one FAIL, "N checks not run", a non-zero exit — seconds, not a child per check. Two
// children in a row dying at their first check stop it too.
func TestSelftestStopsWhenTheGPUFailsEarly(t *testing.T) {
	bin := buildInspector(t)
	total := selftestMetalSteps(t)
	for _, c := range []struct {
		fault  string
		fails  int
		notRun int
		why    string
	}{
		{"child-start:abort", 1, total - 1, "the GPU fails before any check can run (the child died at device, library and pipelines)"},
		{"child-start:hang", 1, total - 1, "the GPU fails before any check can run (the child died at device, library and pipelines)"},
		{"a first pass:segv", 1, total - 2, "the GPU fails before any check can run (the child died at a first pass on the GPU)"},
		{"Add/n1/inplacefalse:abort;child-restart:abort", 3, -1, "the GPU fails before any check can run (two children in a row died at their first check)"},
	} {
		r := runStandinSelftest(t, bin, c.fault)
		fails := failLines(r.text)
		if r.exit == 0 || len(fails) != c.fails || r.report.Failed != c.fails {
			t.Errorf("%s: exit %d, %d FAIL lines (report %d), want %d:\n%s", c.fault, r.exit, len(fails), r.report.Failed, c.fails, r.text)
		}
		notRun := c.notRun
		if notRun < 0 { // the three checks from Add/n1 on failed; everything after them was not run
			notRun = total - (stepIndex(t, "Add/n1/inplacefalse") + 3)
		}
		line := "checks not run: " + c.why
		if !strings.Contains(r.text, line) || r.report.NotRun != notRun || r.report.Sections[0].NotRun != notRun {
			t.Errorf("%s: want %d %q, report not_run %d:\n%s", c.fault, notRun, line, r.report.NotRun, r.text)
		}
		if want := " not run\n"; !strings.Contains(r.text, want) {
			t.Errorf("%s: the summary does not count the checks not run:\n%s", c.fault, r.text)
		}
		// With the tests' 3 s silence: a hang costs one silence, not one per check.
		if r.elapsed > time.Minute {
			t.Errorf("%s: took %v", c.fault, r.elapsed)
		}
	}
}

// selftestMetalSteps is the number of checks of the Metal section (without times).
func selftestMetalSteps(t *testing.T) int { return len(metalStepNames(t)) }

// stepIndex is the index of the check named name in the Metal section.
func stepIndex(t *testing.T, name string) int {
	i := slices.Index(metalStepNames(t), name)
	if i < 0 {
		t.Fatalf("no check %q", name)
	}
	return i
}

// metalStepNames are the Metal section's checks, in order (without times).
func metalStepNames(t *testing.T) []string {
	towers, cleanup, err := selftestTowers()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	steps, closeSteps := metalSteps(towers, true)
	closeSteps()
	var names []string
	for _, s := range steps {
		names = append(names, s.name)
	}
	return names
}

// A record with a NaN or Inf number travels as JSON: its numbers as text, the check failed.
func TestChildEventsCarryNonFiniteAsText(t *testing.T) {
	var buf bytes.Buffer
	emit, broken := childEmitter(&buf)
	emit(childEvent{Kind: "check", Check: &checkRecord{Name: "tower", OK: true, RelErr: math.NaN(), Tol: 1e-5}})
	emit(childEvent{Kind: "time", Time: &timeRecord{Name: "matmul", Millis: math.Inf(1), GFLOPs: math.Inf(1)}})
	if *broken != nil {
		t.Fatal(*broken)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), buf.String())
	}
	var check, tm childEvent
	if err := json.Unmarshal([]byte(lines[0]), &check); err != nil || check.Check == nil {
		t.Fatalf("%v: %s", err, lines[0])
	}
	if c := check.Check; c.OK || c.NonFinite != "rel_err NaN" || !strings.Contains(c.Error, "NaN") || c.RelErr != 0 {
		t.Errorf("the check: %+v", c)
	}
	if err := json.Unmarshal([]byte(lines[1]), &tm); err != nil || tm.Time == nil || !strings.Contains(tm.Time.Error, "+Inf") {
		t.Errorf("the time: %v %s", err, lines[1])
	}
	// The parent's own records (the CPU section) are made finite too: the report is valid JSON.
	st := &selftest{w: &bytes.Buffer{}}
	st.section(cpu.Name)
	st.record(checkRecord{Name: "tower", OK: true, RelErr: math.Inf(1)})
	if st.report.Failed != 1 || st.report.Passed != 0 {
		t.Errorf("a check with an infinite error counted passed=%d failed=%d", st.report.Passed, st.report.Failed)
	}
	if _, err := json.Marshal(st.report); err != nil {
		t.Errorf("the report: %v", err)
	}
}

// Where the GPU built no pipeline for some kernels, the coverage line says so and names them
// and why, instead of claiming every kernel was dispatched.
func TestCoverageLineNamesFallbacks(t *testing.T) {
	bin := buildInspector(t)
	const family = "matmul (simdgroup matrices) did not compile: error X; the scalar matmul runs instead"
	r := runStandinSelftest(t, bin, "", "INSPECTOR_TEST_FALLBACKS="+family)
	want := "kernel coverage: each of the library's 27 kernels is dispatched by a conformance case above; but this GPU has no pipeline for some kernels, and their cases ran the fallbacks instead: " + family
	if r.exit != 0 || !strings.Contains(r.text, want) || !strings.Contains(r.report.CoverageNote, family) {
		t.Errorf("exit %d, coverage note %q:\n%s", r.exit, r.report.CoverageNote, r.text)
	}
	// With the device's pipelines known, the kernels without one are named.
	st := &selftest{w: &bytes.Buffer{}}
	st.section(metal.Name)
	info := &metal.DeviceInfo{FamilyErrors: []string{family}}
	for _, k := range shaders.Kernels() {
		if !strings.HasPrefix(k, "matmul_") || strings.HasPrefix(k, "matmul_scalar_") {
			info.PipelineInfo = append(info.PipelineInfo, metal.PipelineInfo{Name: k})
		}
	}
	st.sec.Device = info
	note := st.fallbackNote()
	if !strings.Contains(note, "no pipeline for 6 kernels (matmul_bf16, matmul_bf16_m32, ") || !strings.Contains(note, family) {
		t.Errorf("note %q", note)
	}
}
