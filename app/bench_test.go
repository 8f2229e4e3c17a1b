package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/bench"
)

// benchJSON is what bench --json writes.
type benchJSON struct {
	Results []bench.Result `json:"results"`
}

// runBench runs the inspector's bench with args and --json, and returns the JSON it wrote and
// its output.
func runBench(t *testing.T, bin string, args ...string) (benchJSON, []byte) {
	t.Helper()
	js := filepath.Join(t.TempDir(), "bench.json")
	out, err := exec.Command(bin, append(append([]string{"bench"}, args...), "--json", js)...).CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var got benchJSON
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got, out
}

// bench sweeps every combination asked, each in a child process, and reports what each one
// measured: pread reads its blocks' bytes and mapped reads none, every time and rate is a
// positive finite number, and the table names every configuration.
func TestBenchSweep(t *testing.T) {
	bin := buildInspector(t)
	got, out := runBench(t, bin, "--checkpoint", "testdata/e2e/tiny", "--patches", "16,64", "--tile", "8,512",
		"--residency", "mapped,pread", "--threads", "2", "--blocks", "2")
	if len(got.Results) != 8 {
		t.Fatalf("%d results, want 2 patch counts x 2 tiles x 2 modes = 8", len(got.Results))
	}
	seen := map[bench.Config]bool{}
	for _, r := range got.Results {
		seen[r.Config] = true
		if r.Blocks != 2 {
			t.Errorf("%+v: %d blocks timed, want 2", r.Config, r.Blocks)
		}
		for name, v := range map[string]float64{"block": r.BlockS, "attention": r.AttentionS, "mlp": r.MLPS, "host": r.HostS,
			"attention GFLOP/s": r.AttentionGFLOPs, "attention op GFLOP/s": r.AttentionOpGF, "MLP GFLOP/s": r.MLPGFLOPs, "peak RSS": float64(r.PeakRSS)} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("%+v: %s = %v, want a positive number", r.Config, name, v)
			}
		}
		// The ops' own times (the CPU backend is synchronous): the block's GEMMs and attention
		// are in them, and no op takes longer than the block.
		for _, op := range []string{"matmul", "attention", "layernorm"} {
			if v := r.OpsS[op]; !(v > 0) || v > r.BlockS {
				t.Errorf("%+v: op %s %.6f s in a block of %.6f s (ops %v)", r.Config, op, v, r.BlockS, r.OpsS)
			}
		}
		// Each block's own wall and host work, in order: as many as blocks timed, the median
		// of the walls the block figure.
		if len(r.BlockWallsS) != r.Blocks || len(r.HostWallsS) != r.Blocks {
			t.Errorf("%+v: %d block walls, %d host walls, want %d each", r.Config, len(r.BlockWallsS), len(r.HostWallsS), r.Blocks)
		} else if m := bench.Median(r.BlockWallsS); m != r.BlockS {
			t.Errorf("%+v: median of the block walls %v = %v, block %v", r.Config, r.BlockWallsS, m, r.BlockS)
		}
		for i := range min(len(r.BlockWallsS), len(r.HostWallsS)) {
			if !(r.HostWallsS[i] >= 0 && r.HostWallsS[i] < r.BlockWallsS[i]) {
				t.Errorf("%+v: block %d host %v of wall %v", r.Config, i, r.HostWallsS[i], r.BlockWallsS[i])
			}
		}
		if r.HostS >= r.BlockS { // the statistics and downloads: never the whole block
			t.Errorf("%+v: host work %.6f s of a block of %.6f s", r.Config, r.HostS, r.BlockS)
		}
		if !(r.BlockOverHalves >= 0.99) || math.IsInf(r.BlockOverHalves, 0) { // the wall holds both halves
			t.Errorf("%+v: block over halves %v, want a finite number of at least 1", r.Config, r.BlockOverHalves)
		}
		if r.AttentionS+r.MLPS > r.BlockS*1.01 {
			t.Errorf("%+v: halves %.6f + %.6f s exceed the block's %.6f s", r.Config, r.AttentionS, r.MLPS, r.BlockS)
		}
		if (r.Residency == "pread") != (r.BytesRead > 0) {
			t.Errorf("%+v: %d bytes read per block", r.Config, r.BytesRead)
		}
		if !strings.Contains(string(out), r.Residency) || !strings.Contains(string(out), "host ms") || !strings.Contains(string(out), "ops ms: matmul") {
			t.Errorf("the table lacks %s:\n%s", r.Residency, out)
		}
	}
	if len(seen) != 8 {
		t.Errorf("configurations %v, want 8 distinct ones", seen)
	}
}

// bench --gemm times each of block 0's products with the checkpoint's weights and, for a bf16
// checkpoint, with the same weights widened to float32 (gflops_f32_weights, and the ratio on
// the GEMM line); a float32 checkpoint has no second number.
func TestBenchGEMMWeights(t *testing.T) {
	bin := buildInspector(t)
	ck := filepath.Join(t.TempDir(), "bf16")
	if out, err := exec.Command(bin, "gen", "--preset", "tiny", "--dtype", "bf16", "--out", ck).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	for _, c := range []struct {
		dir  string
		f32w bool
	}{{ck, true}, {"testdata/e2e/tiny", false}} {
		got, out := runBench(t, bin, "--checkpoint", c.dir, "--patches", "64", "--threads", "2", "--blocks", "1", "--gemm")
		if len(got.Results) != 1 || len(got.Results[0].GEMMs) != 4 {
			t.Fatalf("%s: %+v, want one result with 4 GEMMs", c.dir, got.Results)
		}
		for _, g := range got.Results[0].GEMMs {
			if !(g.GFLOPs > 0) || (g.GFLOPsF32W > 0) != c.f32w {
				t.Errorf("%s: GEMM %s: %v GFLOP/s, float32 weights %v; want both only for a bf16 checkpoint", c.dir, g.Name, g.GFLOPs, g.GFLOPsF32W)
			}
		}
		if strings.Contains(string(out), "float32 weights:") != c.f32w {
			t.Errorf("%s: the GEMM lines:\n%s", c.dir, out)
		}
	}
}

// bench --loops profiles the timed blocks' parallel loops: per call site, in the engine's
// own files, with the attention op's and the products' among them, idle shares between 0 and
// 1, the most wall first, and a table that names them; without it the JSON has none.
func TestBenchLoops(t *testing.T) {
	bin := buildInspector(t)
	got, out := runBench(t, bin, "--checkpoint", "testdata/e2e/tiny", "--patches", "64", "--threads", "2", "--blocks", "2", "--loops")
	if len(got.Results) != 1 {
		t.Fatalf("%d results, want 1", len(got.Results))
	}
	loops := got.Results[0].Loops
	seen := map[string]bool{}
	for i, l := range loops {
		file, _, _ := strings.Cut(l.Site, ":")
		seen[file] = true
		if l.Loops < 1 || l.Tasks < l.Loops || !(l.Wall > 0) || !(l.Busy > 0) || !(l.Idle >= 0 && l.Idle < 1) {
			t.Errorf("site %+v", l)
		}
		if i > 0 && l.Wall > loops[i-1].Wall {
			t.Errorf("site %s (%v) after %s (%v): want the most wall first", l.Site, l.Wall, loops[i-1].Site, loops[i-1].Wall)
		}
	}
	if !seen["attention.go"] || !seen["matmul.go"] {
		t.Errorf("sites %v, want the attention op's and the products' among them", seen)
	}
	if !strings.Contains(string(out), "parallel loops over 2 blocks") || !strings.Contains(string(out), "attention.go:") {
		t.Errorf("the loops table is missing:\n%s", out)
	}
	plain, _ := runBench(t, bin, "--checkpoint", "testdata/e2e/tiny", "--patches", "64", "--threads", "2", "--blocks", "1")
	if len(plain.Results) != 1 || plain.Results[0].Loops != nil {
		t.Errorf("without --loops: %+v", plain.Results)
	}
}

func TestBenchFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--checkpoint", "testdata/e2e/tiny", "--patches", "18"}, "multiple of 4"},
		{[]string{"bench", "--checkpoint", "testdata/e2e/tiny", "--tile", "0"}, "--tile"},
		{[]string{"bench", "--checkpoint", "testdata/e2e/tiny", "--residency", "swap"}, "swap"},
		{[]string{"bench", "--checkpoint", "testdata/e2e/tiny", "--blocks", "0"}, "--blocks 0"},
		{[]string{"bench"}, "--checkpoint"},
	} {
		if msg := cliFails(t, c.args...); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q lacks %q", c.args, msg, c.want)
		}
	}
}
