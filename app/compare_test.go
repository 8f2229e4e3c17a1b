package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/internal/numcheck"
)

// inspector compare of identical settings, while every core is kept busy by another load,
// reads "within noise"; its JSON holds every pass of both sides, the ratio's interval, the
// verdict and the largest output difference (0).
func TestCompareCLIUnderLoad(t *testing.T) {
	var stop atomic.Bool
	defer stop.Store(true)
	for range runtime.NumCPU() { // the background load
		go func() {
			x := 1.0
			for !stop.Load() {
				for i := 0; i < 1e5; i++ {
					x = x*1.0000001 + 1e-9
				}
			}
			_ = x
		}()
	}
	js := filepath.Join(t.TempDir(), "cmp.json")
	out := cli(t, "compare", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--a", "tile=512,threads=2",
		"--b", "tile=512,threads=2", "--reps", "4", "--blocks", "3", "--json", js)
	if !strings.Contains(out, "no difference (identical settings") || !strings.Contains(out, "outputs: identical") {
		t.Errorf("identical settings under load:\n%s", out)
	}
	var got struct {
		Patches    int `json:"patches"`
		Comparison struct {
			A, B struct {
				Passes []struct {
					BlockS []float64 `json:"block_s"`
					TotalS float64   `json:"total_s"`
				} `json:"passes"`
			}
			Reps          int      `json:"reps"`
			RatioLow      *float64 `json:"ratio_low"`
			RatioHigh     *float64 `json:"ratio_high"`
			Verdict       string   `json:"verdict"`
			MaxOutputDiff *float64 `json:"max_output_diff"`
		} `json:"comparison"`
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("the JSON: %v\n%s", err, b)
	}
	c := got.Comparison
	if c.Reps != 4 || len(c.A.Passes) != 4 || len(c.B.Passes) != 4 || len(c.A.Passes[0].BlockS) != 3 || c.Verdict != "within noise" ||
		c.RatioLow == nil || c.RatioHigh == nil || c.MaxOutputDiff == nil || *c.MaxOutputDiff != 0 || got.Patches == 0 {
		t.Errorf("the JSON: %s", b)
	}
}

func TestCompareCLIFlags(t *testing.T) {
	base := []string{"compare", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--a", "tile=x"}, "--a tile=x: want a whole number"},
		{[]string{"--b", "colour=red"}, `--b: unknown setting "colour"`},
		{[]string{"--a", "tile"}, "want key=value pairs"},
		{[]string{"--a", "max-pixels=50000"}, "both sides run one page"},
		{[]string{"--a", "max-pixels=1023", "--b", "max-pixels=1023"}, "--a max-pixels 1023: want 1024 to"},
		{[]string{"--reps", "0"}, "--reps 0"},
		{[]string{"--json", "../assets/demo/x.json"}, "a folder the run reads"},
	} {
		if msg := cliFails(t, append(base, c.args...)...); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.args, msg, c.want)
		}
	}
}

// Head ablation on the CLI: run's --ablate/--ablate-mode reach the run (the header and the
// JSON name them, the dump's merger moves), bad values are refused naming the flag, and
// compare takes it as a setting of one side (pairs joined by +) and reports the outputs apart.
func TestAblateCLI(t *testing.T) {
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	dir := t.TempDir()
	plain, abl := filepath.Join(dir, "plain.safetensors"), filepath.Join(dir, "abl.safetensors")
	js := filepath.Join(dir, "abl.json")
	cli(t, append(base, "--quiet", "--dump", plain)...)
	out := cli(t, append(base, "--dump", abl, "--json", js, "--ablate", "1:*,2:0", "--ablate-mode", "mean")...)
	if !strings.Contains(out, "intervention: ablate 1:*,2:0 (mean)") {
		t.Errorf("the run's header does not name the ablation:\n%s", out)
	}
	var rep struct {
		Settings struct {
			Ablate     string `json:"ablate"`
			AblateMode string `json:"ablate_mode"`
		} `json:"settings"`
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Settings.Ablate != "1:*,2:0" || rep.Settings.AblateMode != "mean" {
		t.Errorf("--json settings %+v (%v)", rep.Settings, err)
	}
	_, p := readAll(t, plain)
	_, a := readAll(t, abl)
	if !numcheck.BitEqual(p["blocks.0.out"], a["blocks.0.out"]) || numcheck.RelErr(a["merger"], p["merger"]) < 1e-4 {
		t.Error("the ablation of blocks 1 and 2 should leave block 0 and move the merger")
	}
	for args, want := range map[string]string{"--ablate 1": "--ablate", "--ablate 9:0": "blocks 0..3", "--ablate-mode half --ablate 1:0": "zero or mean"} {
		if msg := cliFails(t, append(base, strings.Fields(args)...)...); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %q", args, msg, want)
		}
	}
	cmp := cli(t, "compare", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--reps", "1", "--b", "ablate=1:0+1:1,ablate-mode=zero")
	if !strings.Contains(cmp, "B = cpu") || !strings.Contains(cmp, "ablate 1:0,1:1 (zero)") || strings.Contains(cmp, "outputs: identical") {
		t.Errorf("compare with an ablated side:\n%s", cmp)
	}
}

// A dump records where it came from, and verify --dump prints it: the checkpoint and its
// config's sha256, the image and its sha256 and sizes, the page, the settings and the
// ablation as run, the attention rows' query and its patch, the version.
func TestDumpProvenance(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "d.safetensors")
	cli(t, "run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet", "--dump", dump,
		"--attention-query", "5", "--ablate", "2:1", "--tile", "64")
	out := cli(t, "verify", "--dump", dump)
	hash := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	for _, want := range []string{
		"checkpoint             ../assets/demo", "config_sha256          " + hash("../assets/demo/config.json"),
		"image                  ../assets/sample.png", "image_sha256           " + hash("../assets/sample.png"),
		"interventions          ablate 2:1 (zero)", `"TileRows":64`, "attn_row_query         5", "model_type             qwen3_vl",
		"grid_thw               1,", "version                " + engine.Version,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify --dump lacks %q:\n%s", want, out)
		}
	}
	if msg := cliFails(t, "verify", "--dump", filepath.Join(t.TempDir(), "none.safetensors")); msg == "" {
		t.Error("verify --dump of a missing file did not fail")
	}
}
