package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/internal/numcheck"
)

// --scale-head (a tenant of intervene's table, offered by the CLI from it): block 2's head 1
// halved leaves blocks 0 and 1 bit for bit and moves block 2 and the merger; a factor of 1
// changes no bit; the header, the JSON and the dump's provenance name it; compare's key takes
// it ("+" for ","); bad specs name the flag, the block or the head.
func TestScaleHeadCLI(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	scaled, plain, one := filepath.Join(dir, "s.safetensors"), filepath.Join(dir, "p.safetensors"), filepath.Join(dir, "o.safetensors")
	js := filepath.Join(dir, "run.json")
	out := cli(t, append(base, "--dump", scaled, "--json", js, "--scale-head", "2:1=0.5")...)
	if !strings.Contains(out, "scale heads 2:1=0.5") {
		t.Errorf("the header does not name the scaling:\n%s", out)
	}
	cli(t, append(base, "--dump", plain, "--quiet")...)
	cli(t, append(base, "--dump", one, "--quiet", "--scale-head", "2:1=1")...)
	_, s := readAll(t, scaled)
	_, p := readAll(t, plain)
	_, o := readAll(t, one)
	if !numcheck.BitEqual(o["merger"], p["merger"]) {
		t.Error("a factor of 1 moved the merger")
	}
	if !numcheck.BitEqual(s["blocks.1.out"], p["blocks.1.out"]) || numcheck.BitEqual(s["blocks.2.out"], p["blocks.2.out"]) || numcheck.BitEqual(s["merger"], p["merger"]) {
		t.Error("scaling block 2's head must leave blocks 0 and 1 as they were and move block 2 and the merger")
	}
	if data, err := os.ReadFile(js); err != nil || !strings.Contains(string(data), "scale heads 2:1=0.5") {
		t.Errorf("the JSON does not name the scaling (%v)", err)
	}
	if out := cli(t, "verify", "--dump", scaled); !strings.Contains(out, "scale heads 2:1=0.5") {
		t.Errorf("the dump's provenance does not name the scaling:\n%s", out)
	}
	for bad, want := range map[string]string{"2:1": "--scale-head", "4:0=2": "blocks 0..3", "2:9=2": "heads 0..", "2:1=inf": "finite"} {
		if msg := cliFails(t, append(base, "--scale-head", bad)...); !strings.Contains(msg, want) {
			t.Errorf("--scale-head %s: %q, want it to name %s", bad, msg, want)
		}
	}
	if s, err := parseSettingSpec("--b", "scale-head=2:0=1.5+1:2=0.5"); err != nil || s.ScaleHead != "1:2=0.5,2:0=1.5" {
		t.Errorf("compare's scale-head=2:0=1.5+1:2=0.5: %q, %v", s.ScaleHead, err)
	}
}
