package selftest

// probe_test.go: a fault where Metal is first touched never takes the app down. The
// tests' stand-in GPU (INSPECTOR_TEST_GPU=cpu-standin: the CPU engine plays the GPU) lets the
// child protocol run on Linux, and INSPECTOR_TEST_FAULT makes the child segfault in C, abort,
// hang or exit where a crash in Objective-C, libffi or Apple's compiler would: `run` and the
// window start on the CPU and say why, the failure is remembered until asked to retry, and
// selftest fails the check that was running and goes on with the next.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/internal/cachedir"
	"github.com/turbospark/inspector/metal"
	"github.com/turbospark/inspector/shaders"
	"github.com/turbospark/inspector/ui"
)

// probeEnv is the environment of a child run on the stand-in GPU with fault (none if "").
func probeEnv(t *testing.T, cache, fault string, more ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != EnvTestFault && k != EnvTestGPU && k != EnvMetal && k != cachedir.Env {
			env = append(env, kv)
		}
	}
	env = append(env, EnvTestGPU+"=cpu-standin", cachedir.Env+"="+cache, "INSPECTOR_TEST_CHILD_SILENCE=3s")
	if fault != "" {
		env = append(env, EnvTestFault+"="+fault)
	}
	return append(env, more...)
}

// runJSON runs `run` on the demo with env and returns its exit code, stderr and JSON report.
func runJSON(t *testing.T, bin string, env []string) (int, string, map[string]any) {
	t.Helper()
	js := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet", "--json", js)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if b, err := os.ReadFile(js); err == nil {
		json.Unmarshal(b, &rep)
	}
	return rc, stderr.String(), rep
}

func reportNote(rep map[string]any) string {
	s, _ := rep["settings"].(map[string]any)
	note, _ := s["backend_note"].(string)
	return note
}

func TestProbeFaultsStartOnTheCPU(t *testing.T) {
	bin := buildInspector(t)
	for _, c := range []struct{ fault, says string }{
		{"probe:segv", "was killed by SIGSEGV"},
		{"probe:abort", "was killed by SIGABRT"},
		{"probe:hang", "did not answer within 3s (hung)"},
		{"probe:exit", "exited with status 3"},
	} {
		rc, stderr, rep := runJSON(t, bin, probeEnv(t, t.TempDir(), c.fault))
		if rc != 0 {
			t.Errorf("%s: exit %d: %s", c.fault, rc, stderr)
			continue
		}
		retry := "Retry Metal" // a crash is remembered: the note says how to try again
		if strings.HasSuffix(c.fault, "hang") || strings.HasSuffix(c.fault, "exit") {
			retry = "the next start tries again"
		}
		if !strings.Contains(stderr, "note: running on the CPU: the Metal start-up probe "+c.says) || !strings.Contains(stderr, retry) {
			t.Errorf("%s: stderr %q, want the note saying the probe %s", c.fault, stderr, c.says)
		}
		if note := reportNote(rep); !strings.Contains(note, c.says) {
			t.Errorf("%s: the JSON's backend_note %q", c.fault, note)
		}
	}
}

// A crashed probe is remembered: the next start does not probe (it would pass now) and says
// when it failed; INSPECTOR_METAL=retry probes again; INSPECTOR_METAL=off never does.
func TestProbeRememberedUntilRetry(t *testing.T) {
	bin := buildInspector(t)
	cache := t.TempDir()
	if _, stderr, _ := runJSON(t, bin, probeEnv(t, cache, "probe:abort")); !strings.Contains(stderr, "killed by SIGABRT") {
		t.Fatalf("the first run: %q", stderr)
	}
	memory := filepath.Join(cache, "metal-probe.json")
	if _, err := os.Stat(memory); err != nil {
		t.Fatalf("the crash was not remembered: %v", err)
	}
	_, stderr, rep := runJSON(t, bin, probeEnv(t, cache, ""))
	if !strings.Contains(stderr, "the Metal start-up probe failed on ") || !strings.Contains(stderr, "killed by SIGABRT") {
		t.Errorf("the second run (no fault now): %q, want the remembered failure", stderr)
	}
	if s, _ := rep["settings"].(map[string]any); !strings.HasPrefix(s["backend"].(string), cpu.Name) {
		t.Errorf("the second run ran on %v after a remembered crash", s["backend"])
	}
	_, stderr, rep = runJSON(t, bin, probeEnv(t, cache, "", EnvMetal+"=retry"))
	if s, _ := rep["settings"].(map[string]any); !strings.HasPrefix(s["backend"].(string), "stand-in GPU") || strings.Contains(stderr, "note:") {
		t.Errorf("after retry: backend %v, stderr %q (want the stand-in GPU, no note)", s["backend"], stderr)
	}
	if _, err := os.Stat(memory); err == nil {
		t.Error("retry did not forget the crash")
	}
	_, stderr, rep = runJSON(t, bin, probeEnv(t, cache, "probe:segv", EnvMetal+"=off"))
	if s, _ := rep["settings"].(map[string]any); !strings.HasPrefix(s["backend"].(string), cpu.Name) || !strings.Contains(stderr, "Metal is off (INSPECTOR_METAL=off)") {
		t.Errorf("INSPECTOR_METAL=off: backend %v, stderr %q", s["backend"], stderr)
	}
}

// The window's backends: a crashed probe offers the CPU only, with the note and a Retry that
// probes again.
func TestWindowBackendsAfterACrash(t *testing.T) {
	needsHooks(t)
	bin := buildInspector(t)
	probeExe = func() (string, error) { return bin, nil }
	defer func() { probeExe = os.Executable }()
	cache := t.TempDir()
	for _, kv := range probeEnv(t, cache, "probe:segv") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	probeState.Lock()
	probeState.done = false
	probeState.Unlock()
	b := ui.MachineBackends()
	if b.Offers(metal.Name) || !strings.Contains(b.Notes[cpu.Name], "killed by SIGSEGV") || b.Retry == nil || !strings.Contains(b.Unavailable[metal.Name], "SIGSEGV") {
		t.Fatalf("after a crashed probe: %+v", b)
	}
	os.Unsetenv(EnvTestFault)
	nb, err := b.Retry()
	if err != nil || !nb.Offers(metal.Name) || nb.Notes[cpu.Name] != "" {
		t.Errorf("retry without the fault: %v, %+v", err, nb)
	}
	probeState.Lock()
	probeState.done = false
	probeState.Unlock()
}

// selftest's Metal section in children: a check that crashes (or hangs) is that check's FAIL,
// with how the child died, and the checks after it still run; --report holds it all.
func TestSelftestMetalChildFaults(t *testing.T) {
	bin := buildInspector(t)
	for _, c := range []struct{ fault, check, says string }{
		{"MatMul/BF16/rows1000:abort", "MatMul/BF16/rows1000/in40/out970", "was killed by SIGABRT"},
		{"sample photo, pread:segv", "demo (f32) on the sample photo, pread", "was killed by SIGSEGV"},
		{"GELU/erf/n7:hang", "GELU/erf/n7", "did not finish within 3s (hung)"},
	} {
		report := filepath.Join(t.TempDir(), "report.json")
		cmd := exec.Command(bin, "selftest", "--backend", metal.Name, "--no-times", "--report", report)
		cmd.Env = probeEnv(t, t.TempDir(), c.fault)
		out, err := cmd.CombinedOutput()
		text := string(out)
		if err == nil {
			t.Errorf("%s: selftest passed:\n%s", c.fault, text)
		}
		failLine := ""
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, c.check) && strings.Contains(l, "FAIL") {
				failLine = l
			}
		}
		if !strings.Contains(failLine, "the child "+c.says) {
			t.Errorf("%s: no FAIL line for %q saying %q:\n%s", c.fault, c.check, c.says, text)
		}
		after := text[strings.Index(text, failLine)+len(failLine):]
		if !strings.Contains(after, "tiny qwen3.5 (bf16, hd 72), image + video, pread") || !strings.Contains(text, "1 failed") {
			t.Errorf("%s: the checks after the fault did not run, or others failed:\n%s", c.fault, text)
		}
		var rep Report
		b, err := os.ReadFile(report)
		if err != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("%s: the report: %v\n%s", c.fault, err, b)
		}
		if rep.Failed != 1 || len(rep.Sections) != 1 || rep.Sections[0].Backend != metal.Name {
			t.Errorf("%s: report %d failed, sections %+v", c.fault, rep.Failed, rep.Sections)
		}
	}
}

// Off macOS the report says why Metal was skipped, and maps every kernel of the library to
// the conformance cases that dispatch it (none empty).
func TestSelftestReportOffMac(t *testing.T) {
	if metalOnThisMachine() {
		t.Skip("Metal runs here")
	}
	report := filepath.Join(t.TempDir(), "report.json")
	var out strings.Builder
	if err := Run(&out, Options{Which: metal.Name, NoTimes: true, Save: saveReport(report)}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var rep Report
	b, err := os.ReadFile(report)
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("the report: %v\n%s", err, b)
	}
	if len(rep.Sections) != 1 || !strings.Contains(rep.Sections[0].Skipped, "needs macOS") {
		t.Errorf("the Metal section: %+v", rep.Sections)
	}
	if rep.Machine.OS == "" || rep.Machine.Go == "" || rep.Machine.OSVersion == "" {
		t.Errorf("machine: %+v", rep.Machine)
	}
	for _, k := range shaders.Kernels() {
		if len(rep.Coverage[k]) == 0 {
			t.Errorf("coverage: %s has no case", k)
		}
	}
}

// metalOnThisMachine says whether this build has Metal to test (a Mac).
func metalOnThisMachine() bool { return os.Getenv(EnvTestGPU) != "" || runtime.GOOS == "darwin" }

// A GPU on which a kernel family did not build runs Metal on its fallback kernels, and says
// which (note:, backend_note).
func TestProbeFallbacksSaid(t *testing.T) {
	bin := buildInspector(t)
	const family = "matmul (simdgroup matrices) did not compile: error X; the scalar matmul runs instead"
	_, stderr, rep := runJSON(t, bin, probeEnv(t, t.TempDir(), "", "INSPECTOR_TEST_FALLBACKS="+family))
	s, _ := rep["settings"].(map[string]any)
	if !strings.HasPrefix(s["backend"].(string), "stand-in GPU") || !strings.Contains(stderr, "note: Metal runs fallback kernels: "+family) ||
		!strings.Contains(reportNote(rep), family) {
		t.Errorf("backend %v, stderr %q, backend_note %q", s["backend"], stderr, reportNote(rep))
	}
}

// A kernel that computes wrong numbers in the probe (every pipeline runs there once) starts on
// the CPU with the reason; it is not a crash, so nothing is remembered and the next start
// probes again.
func TestProbeWrongKernelsStartOnTheCPU(t *testing.T) {
	bin := buildInspector(t)
	for _, c := range []struct{ fault, says string }{
		{"probe:nan", "the output holds NaN"},
		{"probe:oob", "the op wrote outside its output"},
	} {
		cache := t.TempDir()
		rc, stderr, rep := runJSON(t, bin, probeEnv(t, cache, c.fault))
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", c.fault, rc, stderr)
		}
		s, _ := rep["settings"].(map[string]any)
		want := "note: running on the CPU: the Metal start-up probe found kernels that compute wrong numbers on this GPU: 27 of the 27 kernel checks failed: "
		if !strings.HasPrefix(s["backend"].(string), cpu.Name) || !strings.Contains(stderr, want) || !strings.Contains(stderr, c.says) {
			t.Errorf("%s: backend %v, stderr %q", c.fault, s["backend"], stderr)
		}
		if _, err := os.Stat(filepath.Join(cache, "metal-probe.json")); err == nil {
			t.Errorf("%s: a wrong kernel was remembered as a crash", c.fault)
		}
	}
}

// Only a death by a signal is remembered: a probe that hung (a slow first compile) or exited
// is tried again at the next start, and says so.
func TestProbeRemembersOnlyCrashes(t *testing.T) {
	bin := buildInspector(t)
	for _, c := range []struct {
		fault    string
		remember bool
	}{{"probe:hang", false}, {"probe:exit", false}, {"probe:segv", true}, {"probe:abort", true}} {
		cache := t.TempDir()
		_, stderr, _ := runJSON(t, bin, probeEnv(t, cache, c.fault))
		_, err := os.Stat(filepath.Join(cache, "metal-probe.json"))
		if remembered := err == nil; remembered != c.remember {
			t.Errorf("%s: remembered %v, want %v (stderr %q)", c.fault, remembered, c.remember, stderr)
		}
		if !c.remember && !strings.Contains(stderr, "the next start tries again") {
			t.Errorf("%s: stderr %q does not say the next start tries again", c.fault, stderr)
		}
	}
}

// Ctrl-C while the probe child runs (SIGINT to the whole process group, as a terminal sends
// it) stops the command and is not remembered as a probe crash: the next start uses Metal.
func TestCtrlCDuringTheProbeIsNotACrash(t *testing.T) {
	bin := buildInspector(t)
	cache := t.TempDir()
	cmd := exec.Command(bin, "run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet")
	cmd.Env = probeEnv(t, cache, "probe:sigint")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group: the test is not interrupted
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("run with Ctrl-C during the probe: %v, stderr %q (want it stopped)", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(cache, "metal-probe.json")); err == nil {
		t.Error("the interrupted probe was remembered as a crash")
	}
	_, stderr2, rep := runJSON(t, bin, probeEnv(t, cache, ""))
	if s, _ := rep["settings"].(map[string]any); s == nil || !strings.HasPrefix(s["backend"].(string), "stand-in GPU") {
		t.Errorf("the next start: settings %v, stderr %q (want the stand-in GPU)", s, stderr2)
	}
}
