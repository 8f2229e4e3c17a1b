package selftest

// testhooks_test.go: the tests' hooks exist only in the tests' build. The release binary (no
// build tag) holds none of their variables' names, and with every hook variable set it starts
// no stand-in, injects no fault and remembers no faked crash; the tests' build (-tags
// inspectortest) holds them all (so the check below can fail).

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/metal"
)

var hookNames = []string{"INSPECTOR_TEST_FAULT", "INSPECTOR_TEST_GPU", "INSPECTOR_TEST_CHILD_SILENCE", "INSPECTOR_TEST_FALLBACKS", "stand-in GPU", "ts_segv"}

func TestReleaseBuildHasNoTestHooks(t *testing.T) {
	release, tests := buildInspectorTags(t, ""), buildInspector(t)
	rel, err := os.ReadFile(release)
	if err != nil {
		t.Fatal(err)
	}
	tst, err := os.ReadFile(tests)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range hookNames {
		if bytes.Contains(rel, []byte(name)) {
			t.Errorf("the release binary holds %q", name)
		}
		if !bytes.Contains(tst, []byte(name)) {
			t.Errorf("the tests' binary lacks %q: this check could not fail", name)
		}
	}
	// With every hook asked for, the release binary runs as if none were: no probe crash
	// (the hook would segfault it), nothing remembered, the CPU on Linux.
	cache := t.TempDir()
	env := probeEnv(t, cache, "probe:segv;child-start:abort", "INSPECTOR_TEST_FALLBACKS=x")
	rc, stderr, rep := runJSON(t, release, env)
	s, _ := rep["settings"].(map[string]any)
	if rc != 0 || strings.Contains(stderr, "SIGSEGV") || s == nil {
		t.Fatalf("the release binary with the hooks' variables: exit %d, stderr %q", rc, stderr)
	}
	if want := autoBackendOf(t); !strings.HasPrefix(s["backend"].(string), want) {
		t.Errorf("backend %v, want %s (the stand-in GPU is not in the release build)", s["backend"], want)
	}
	if _, err := os.Stat(filepath.Join(cache, "metal-probe.json")); err == nil {
		t.Error("the release binary remembered a faked probe crash")
	}
}

// autoBackendOf is what auto gives the release build here: metal on a Mac, else cpu.
func autoBackendOf(t *testing.T) string {
	if metalOnThisMachine() && !strings.Contains(os.Getenv(EnvTestGPU), "standin") {
		return metal.Name
	}
	return cpu.Name
}

// An INSPECTOR_METAL that is not a setting is named, on stderr and as the reason Metal is not
// used, not read as "on".
func TestUnknownMetalSettingIsNamed(t *testing.T) {
	bin := buildInspector(t)
	rc, stderr, rep := runJSON(t, bin, probeEnv(t, t.TempDir(), "", EnvMetal+"=on"))
	s, _ := rep["settings"].(map[string]any)
	want := `INSPECTOR_METAL="on" is not a setting (want off or retry, or leave it unset): Metal is not used`
	if rc != 0 || !strings.Contains(stderr, "inspector: warning: "+want) || !strings.HasPrefix(s["backend"].(string), cpu.Name) ||
		!strings.Contains(reportNote(rep), want) {
		t.Errorf("exit %d, stderr %q, backend %v, note %q", rc, stderr, s["backend"], reportNote(rep))
	}
}
