package main

// outputs_test.go: the CLI never loses a file and checks what it can before the work: an
// output over an input or over another output is refused, numbers past their bounds are
// refused, and the trace is a timeline.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/cpu"
)

// copyDemo is a private copy of the tiny e2e checkpoint (outputs may be tried over it).
func copyTiny(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("testdata/e2e/tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/e2e/tiny", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOutputsNeverOverInputs(t *testing.T) {
	ck := copyTiny(t)
	model := filepath.Join(ck, "model.safetensors")
	before, _ := os.ReadFile(model)
	tokenizer := filepath.Join(ck, "tokenizer.json") // a file of the checkpoint the run never opens
	os.WriteFile(tokenizer, []byte("{}"), 0o644)
	img := "testdata/e2e/cat.png"
	out := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(out, link)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dump", model}, "--dump " + model + ": inside " + ck + ", a folder the run reads"},
		{[]string{"--json", filepath.Join(ck, "config.json")}, "a folder the run reads"},
		{[]string{"--dump", tokenizer}, "a folder the run reads"},
		{[]string{"--json", filepath.Join(ck, "new.safetensors")}, "a folder the run reads"},
		{[]string{"--json", img}, "would overwrite an input"},
		{[]string{"--dump", filepath.Join(out, "x"), "--json", filepath.Join(out, "x")}, "would overwrite another output"},
		{[]string{"--dump", filepath.Join(out, "x"), "--json", filepath.Join(link, "x")}, "--json " + filepath.Join(link, "x") + ": would overwrite another output"},
		{[]string{"--json", filepath.Join(out, "missing", "r.json")}, "--json " + filepath.Join(out, "missing", "r.json") + ": the folder " + filepath.Join(out, "missing") + " does not exist"},
		{[]string{"--dump", out}, "a directory, not a file"},
		{[]string{"--trace", filepath.Join(out, strings.Repeat("t", 256))}, "longer than"},
		{[]string{"--attention-query", "3"}, "--attention-query 3: the attention rows are written by --dump"},
		{[]string{"--max-memory", "0.1"}, "--max-memory 0.1"},
		{[]string{"--max-memory", "NaN"}, "--max-memory NaN"},
		{[]string{"--threads", "1000000"}, "--threads 1000000"},
		{[]string{"--tile", "-1"}, "--tile -1: want 1 to"},
		{[]string{"--slots", "1"}, "--slots 1: want 2 to"},
		{[]string{"--max-pixels", "1023"}, "--max-pixels 1023: want 1024 to"},
		{[]string{"--max-pixels", "1000000000000"}, "--max-pixels"},
		{[]string{"--dump", filepath.Join(out, "d"), "--attention-query", "100000"}, "--attention-query 100000"},
	} {
		start := time.Now()
		msg := cliFails(t, append([]string{"run", "--checkpoint", ck, "--image", img, "--quiet"}, c.args...)...)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.args, msg, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: refused after %v (must be before the run)", c.args, d)
		}
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Error("the checkpoint's model.safetensors changed")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused runs left files: %v", ents)
	}
	if ents, _ := os.ReadDir(ck); len(ents) != 4 {
		t.Errorf("refused runs left files in the checkpoint: %v", ents)
	}
}

// bench and gpumodel write their --json and --cpuprofile never into the checkpoint they read.
func TestBenchOutputsNeverOverTheCheckpoint(t *testing.T) {
	ck := copyTiny(t)
	model := filepath.Join(ck, "model.safetensors")
	before, _ := os.ReadFile(model)
	for _, args := range [][]string{
		{"bench", "--checkpoint", ck, "--json", model},
		{"bench", "--checkpoint", ck, "--cpuprofile", model},
		{"bench", "--checkpoint", ck, "--json", filepath.Join(ck, "bench.json")},
		{"gpumodel", "--checkpoint", ck, "--json", model},
	} {
		if msg := cliFails(t, args...); !strings.Contains(msg, "a folder the run reads") {
			t.Errorf("%v: %q", args, msg)
		}
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Error("the checkpoint's model.safetensors changed")
	}
}

// A table that cannot be written (stdout on a full disk) fails the command.
func TestStdoutWriteFailure(t *testing.T) {
	var errb strings.Builder
	rc := realMain([]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png"}, failingWriter{}, &errb)
	if rc == 0 || !strings.Contains(errb.String(), "writing to the standard output") {
		t.Errorf("exit %d, stderr %q", rc, errb.String())
	}
	if f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil { // the real thing, where there is one
		defer f.Close()
		errb.Reset()
		if rc := realMain([]string{"verify", "--checkpoint", "testdata/e2e/tiny"}, f, &errb); rc == 0 || !strings.Contains(errb.String(), "no space left") {
			t.Errorf("verify > /dev/full: exit %d, stderr %q", rc, errb.String())
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// The trace is Chrome trace-event JSON with one attention and one MLP event per block.
func TestRunTrace(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.trace.json")
	cli(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--quiet", "--trace", trace)
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct{ Name, Ph string }
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	att, mlp := 0, 0
	for _, e := range tr.TraceEvents {
		switch {
		case strings.HasSuffix(e.Name, " attention") && e.Ph == "X":
			att++
		case strings.HasSuffix(e.Name, " MLP") && e.Ph == "X":
			mlp++
		}
	}
	if att == 0 || att != mlp {
		t.Errorf("%d attention and %d MLP events", att, mlp)
	}
}

// gen refuses a folder that is not empty unless --force, and writes through a new folder.
func TestGenNeverOverAFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	cli(t, "gen", "--preset", "tiny", "--out", dir)
	model := filepath.Join(dir, "model.safetensors")
	before, _ := os.ReadFile(model)
	if msg := cliFails(t, "gen", "--preset", "tiny", "--out", dir, "--seed", "9"); !strings.Contains(msg, "not empty") || !strings.Contains(msg, "--force") {
		t.Errorf("a second gen into the folder: %q", msg)
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Error("the refused gen changed the checkpoint")
	}
	cli(t, "gen", "--preset", "tiny", "--out", dir, "--seed", "9", "--force")
	if after, _ := os.ReadFile(model); string(after) == string(before) {
		t.Error("gen --force did not replace the checkpoint")
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("gen left %d entries next to the folder", len(ents))
	}
	cli(t, "verify", "--checkpoint", dir)

	// --force replaces a checkpoint, never a folder holding anything else.
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("mine"), 0o644)
	os.Mkdir(filepath.Join(dir, "runs"), 0o755)
	msg := cliFails(t, "gen", "--preset", "tiny", "--out", dir, "--force")
	if !strings.Contains(msg, "notes.txt") || !strings.Contains(msg, "runs/") || !strings.Contains(msg, "nothing was changed") {
		t.Errorf("gen --force over a folder with other files: %q", msg)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
		t.Errorf("gen --force lost notes.txt: %q, %v", b, err)
	}
}

// gen --out names a folder of its own: not the current folder or one above it.
func TestGenOutNotTheCurrentFolder(t *testing.T) {
	wd, _ := os.Getwd()
	sub := filepath.Join(t.TempDir(), "a")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "keep.txt"), []byte("mine"), 0o644)
	if err := os.Chdir(sub); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, out := range []string{".", "./", "..", "b/..", sub, "/"} {
		if msg := cliFails(t, "gen", "--preset", "tiny", "--out", out, "--force"); !strings.Contains(msg, "name a folder of the checkpoint's own") {
			t.Errorf("--out %s: %q", out, msg)
		}
	}
	if b, err := os.ReadFile(filepath.Join(sub, "keep.txt")); err != nil || string(b) != "mine" {
		t.Errorf("keep.txt: %q, %v", b, err)
	}
}

// --max-memory refuses a run estimated to hold more, before the work.
func TestMaxMemory(t *testing.T) {
	msg := cliFails(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--max-memory", "64KiB")
	if !strings.Contains(msg, "would hold about") {
		t.Errorf("%q", msg)
	}
	if msg := cliFails(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--max-memory", "lots"); !strings.Contains(msg, "--max-memory lots") {
		t.Errorf("%q", msg)
	}
	out := cli(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--max-memory", "1GiB")
	if !strings.Contains(out, "memory: about") {
		t.Errorf("the header does not say what the run holds:\n%s", out)
	}
}

// A dump whose taps the memory limits turn off is refused before the run, not at its end.
func TestDumpTapsOverTheBudgetRefusedFirst(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.safetensors")
	start := time.Now()
	msg := cliFails(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--dump", out, "--taps", "all", "--max-memory", "16MiB", "--quiet",
		"--backend", cpu.Name, "--threads", "2") // the estimate grows with the threads' buffers: pinned
	if !strings.Contains(msg, "needs the taps") || !strings.Contains(msg, "cannot keep within the memory limits") || time.Since(start) > 5*time.Second {
		t.Errorf("%q after %v", msg, time.Since(start))
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a dump was written")
	}
}
