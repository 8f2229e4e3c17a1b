package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
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
