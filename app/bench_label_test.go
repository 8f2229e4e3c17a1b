package main

import (
	"os/exec"
	"strings"
	"testing"
)

// --blocks past the model's depth times the blocks there are, and the table says which.
func TestBenchBlocksLabel(t *testing.T) {
	bin := buildInspector(t)
	out, err := exec.Command(bin, "bench", "--checkpoint", "testdata/e2e/tiny", "--patches", "16", "--threads", "1", "--blocks", "50").CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "median of blocks 0-3 per configuration") {
		t.Errorf("a 4-block model with --blocks 50:\n%s", out)
	}
}
