package main

// nonfinite_test.go: a NaN weight is named on the command line — its block, op and weight —
// and the --json report is still written and still JSON.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/synth"
)

// poisoned writes the tiny preset with a NaN in tensor bad.
func poisoned(t *testing.T, bad string) string {
	t.Helper()
	dir := t.TempDir()
	if err := synth.WritePoisoned(dir, "tiny", bad); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunNamesANaNWeight(t *testing.T) {
	const bad = "blocks.1.attn.qkv.bias"
	dir := poisoned(t, bad)
	report := filepath.Join(t.TempDir(), "report.json")
	var out, errb bytes.Buffer
	rc := realMain([]string{"run", "--checkpoint", dir, "--image", "testdata/e2e/cat.png", "--json", report}, &out, &errb)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errb.String())
	}
	all := out.String() + errb.String()
	if !strings.Contains(all, "warning:") || !strings.Contains(all, "block 1") || !strings.Contains(all, bad) {
		t.Errorf("the run does not name the NaN (block 1, %s):\n%s", bad, all)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("the JSON report does not parse: %v", err)
	}
	if rep["non_finite"] == nil {
		t.Errorf("the JSON report has no non_finite: %.300s", b)
	}
}

// The warning goes to stderr, --quiet or not, and a merger's NaN is named too (no block
// reads a merger's output, so no block check sees it).
func TestNonFiniteWarningNotQuiet(t *testing.T) {
	for _, bad := range []string{"blocks.1.attn.qkv.bias", "merger.linear_fc1.weight", "deepstack_merger_list.0.norm.weight"} {
		dir := poisoned(t, bad)
		var out, errb bytes.Buffer
		if rc := realMain([]string{"run", "--checkpoint", dir, "--image", "testdata/e2e/cat.png", "--quiet"}, &out, &errb); rc != 0 {
			t.Fatalf("%s: exit %d: %s", bad, rc, errb.String())
		}
		if msg := errb.String(); !strings.Contains(msg, "warning:") || !strings.Contains(msg, bad) {
			t.Errorf("%s with --quiet: stderr %q, want the warning naming it", bad, msg)
		}
		if out.Len() != 0 {
			t.Errorf("%s with --quiet: stdout %q", bad, out.String())
		}
	}
}
