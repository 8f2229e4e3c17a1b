package main

// outputs_test.go: the CLI never loses a file and checks what it can before the work: an
// output over an input or over another output is refused, numbers past their bounds are
// refused, and the trace is a timeline.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	img := "testdata/e2e/cat.png"
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dump", model}, "would overwrite an input"},
		{[]string{"--json", filepath.Join(ck, "config.json")}, "would overwrite an input"},
		{[]string{"--json", img}, "would overwrite an input"},
		{[]string{"--dump", filepath.Join(out, "x"), "--json", filepath.Join(out, "x")}, "would overwrite another output"},
		{[]string{"--threads", "1000000"}, "--threads 1000000"},
		{[]string{"--tile", "0"}, "--tile 0"},
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
}

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
