package main

// nonfinite_test.go: a NaN weight is named on the command line — its block, op and weight —
// and the --json report is still written and still JSON.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
)

func TestRunNamesANaNWeight(t *testing.T) {
	cfg, err := synth.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const bad = "blocks.1.attn.qkv.bias"
	if err := synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 3, Fill: func(name string, shape []int) []float32 {
		if name != bad {
			return nil
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		vals := make([]float32, n)
		vals[5] = float32(math.NaN())
		return vals
	}}); err != nil {
		t.Fatal(err)
	}
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
