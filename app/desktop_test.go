package main

// desktop_test.go: the binary's own stderr and the checkpoint names it takes — the CLI says
// nothing on stderr under Debian's default locale (LANG=C.UTF-8: fyne's locale parse in its
// init would print three lines; internal/clocale), the window's log filter drops only
// Fyne's benign file-dialog reports, the ready line comes once however many runs follow,
// and verify takes a Hugging Face repo id from the local cache.

import (
	"github.com/turbospark/inspector/internal/testfixture"

	"bytes"
	"errors"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/selftest"
	"github.com/turbospark/inspector/ui"
)

// buildInspector builds the program, with the tests' hooks (selftest/testhooks.go), once per
// test process.
func buildInspector(t *testing.T) string {
	t.Helper()
	return buildInspectorTags(t, "inspectortest")
}

// buildInspectorTags builds the program with the build tags tags ("" for the release build),
// once per test process (testfixture.Program).
func buildInspectorTags(t *testing.T, tags string) string {
	t.Helper()
	return testfixture.Program(t, ".", tags)
}

// removeBuilt removes the binaries buildInspectorTags built (TestMain, after the tests).
func removeBuilt() { testfixture.RemovePrograms() }

// needsHooks skips a test that uses the tests' hooks in this process when the test binary was
// built without them (go test without -tags inspectortest; make test has it).
func needsHooks(t *testing.T) {
	t.Helper()
	if !selftest.TestHooksBuilt {
		t.Skip("needs the tests' hooks in the test binary: go test -tags inspectortest (make test)")
	}
}

// localeEnv is this process's environment with the locale variables replaced by set.
func localeEnv(set ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES":
			continue
		}
		env = append(env, kv)
	}
	return append(env, set...)
}

func TestCLIStderrQuietUnderCLocales(t *testing.T) {
	bin := buildInspector(t)
	cmds := [][]string{
		{"verify", "--checkpoint", "../assets/demo"},
		{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet", "--backend", cpu.Name},
		{"help"},
	}
	for _, locale := range [][]string{{"LANG=C.UTF-8"}, {"LC_ALL=C.UTF-8"}, {"LANG=C"}, {"LANG=POSIX"}, {"LANG=en_US.UTF-8"}, nil} {
		for _, args := range cmds {
			// run pins the CPU: the test is about what the CLI prints of its own; auto on a Mac
			// may add a Metal note (fallback kernels, a probe that failed, Metal off).
			cmd := exec.Command(bin, args...)
			cmd.Env = localeEnv(locale...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v %v: %v\n%s", locale, args, err, stderr.String())
			}
			if stderr.Len() != 0 {
				t.Errorf("%v inspector %s: stderr is not empty:\n%s", locale, strings.Join(args, " "), stderr.String())
			}
		}
	}
}

// The filter drops Fyne's "Getting favorite locations" report (all three lines) and passes
// every other report whole: checked against fyne.LogError itself, not a copy of its format.
func TestFyneLogFilter(t *testing.T) {
	var got bytes.Buffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&fyneLogFilter{w: &got})
	fyne.LogError("Getting favorite locations", errors.New("this computer does not define a VIDEOS folder"))
	fyne.LogError("Unable to read ListableURI file:///secret", errors.New("permission denied"))
	fyne.LogError("Getting favorite locations", errors.New("uri is not listable"))
	fyne.LogError("Preferences load error:", io.EOF) // Fyne reloading its own file as it writes it
	fyne.LogError("Preferences load error:", errors.New("invalid character 'x' looking for beginning of value"))
	log.Print("inspector: something of ours")
	lines := strings.Split(strings.TrimSpace(got.String()), "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], "Unable to read ListableURI") || !strings.Contains(lines[1], "Cause: permission denied") ||
		!strings.Contains(lines[2], "At: ") || !strings.Contains(lines[3], "Preferences load error") || !strings.Contains(lines[4], "invalid character") ||
		!strings.Contains(lines[6], "something of ours") {
		t.Errorf("after the filter:\n%s", got.String())
	}
}

// verify takes owner/name from the local Hugging Face cache and says where it looked when
// the model is not there.
func TestVerifyRepoID(t *testing.T) {
	cache := t.TempDir()
	repo := filepath.Join(cache, "models--Qwen--Demo")
	snap := filepath.Join(repo, "snapshots", "abc123")
	for _, d := range []string{filepath.Join(repo, "refs"), filepath.Join(repo, "blobs"), snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"config.json", "preprocessor_config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("../assets/demo", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(repo, "blobs", f+".blob"), b, 0o644)
		if err := os.Symlink(filepath.Join("..", "..", "blobs", f+".blob"), filepath.Join(snap, f)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("abc123"), 0o644)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	out := cli(t, "verify", "--checkpoint", "Qwen/Demo")
	if !strings.Contains(out, "checkpoint   "+snap) || !strings.Contains(out, "4 blocks") {
		t.Errorf("verify Qwen/Demo:\n%s", out)
	}
	msg := cliFails(t, "verify", "--checkpoint", "Qwen/Other")
	for _, want := range []string{"Qwen/Other", filepath.Join(cache, "models--Qwen--Other", "refs", "main"), "HF_HUB_CACHE"} {
		if !strings.Contains(msg, want) {
			t.Errorf("verify of a model not in the cache: %q lacks %q", msg, want)
		}
	}
}

// The ready line is written once: after the first run, not after a Restart's or Apply's.
func TestReadyLineOnce(t *testing.T) {
	a := test.NewTempApp(t)
	queue := make(chan func(), 1024)
	ctl := ui.NewController(func(f func()) { queue <- f }, ui.MachineBackends())
	t.Cleanup(ctl.Close)
	in := ui.NewInspector(a.NewWindow(ui.Title), ctl, nil)
	var out bytes.Buffer
	announceReady(in, &out)
	runs := 0
	done := in.OnFinished
	in.OnFinished = func(s *ui.Snapshot) { runs++; done(s) }
	pump := func(n int) {
		deadline := time.After(time.Minute)
		for runs < n {
			select {
			case f := <-queue:
				f()
			case <-deadline:
				t.Fatalf("timed out waiting for run %d", n)
			}
		}
	}
	in.OpenFiles("../assets/demo", "../assets/sample.png")
	pump(1)
	ctl.Restart()
	ctl.RunAll()
	pump(2)
	if n := strings.Count(out.String(), "inspector: ready; image view at "); n != 1 {
		t.Errorf("%d ready lines after two runs:\n%s", n, out.String())
	}
	// The span holds the work and the time lent to the window, all between the embedding's
	// start and the merger's end (to the line's 0.1 ms).
	m := regexp.MustCompile(`run span ([0-9.]+) ms, work ([0-9.]+) ms, lent to the window ([0-9.]+) ms`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the ready line has no span:\n%s", out.String())
	}
	span, _ := strconv.ParseFloat(m[1], 64)
	work, _ := strconv.ParseFloat(m[2], 64)
	lent, _ := strconv.ParseFloat(m[3], 64)
	if work <= 0 || work+lent > span+0.2 {
		t.Errorf("run span %.1f ms, work %.1f ms, lent %.1f ms: the span must hold both", span, work, lent)
	}
}
