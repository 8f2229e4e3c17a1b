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
	"github.com/turbospark/inspector/metal"
	"github.com/turbospark/inspector/shaders"
)

// gpumodel runs the engine's real graph on the model backend: per patch count, every GPU of
// the model gets a block whose halves add up, whose kernels' modelled times add up to no
// more than the block (the commits are the rest), with the matmul and flash attention
// kernels of the tower among them.
func TestGPUModel(t *testing.T) {
	bin := buildInspector(t)
	js := filepath.Join(t.TempDir(), "model.json")
	out, err := exec.Command(bin, "gpumodel", "--checkpoint", "testdata/e2e/tiny", "--patches", "16,64",
		"--gpu", "M1", "--json", js).CombinedOutput()
	if err != nil {
		t.Fatalf("gpumodel: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "per kernel, block 1 at 64 patches on M1 (8-core)") {
		t.Errorf("no per-kernel table for 64 patches on M1:\n%s", out)
	}
	var got struct {
		Blocks  []bench.ModelBlock             `json:"blocks"`
		Kernels map[string][]bench.ModelKernel `json:"kernels"`
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	// On a Mac with Metal each patch count also gets a measured row (the GPU's own times).
	onMac := metal.Check() == nil
	var modelled, measured int
	for _, blk := range got.Blocks {
		if blk.Measured {
			measured++
			if !(blk.BlockMS > 0) {
				t.Errorf("measured %+v: want a positive block time", blk)
			}
			continue
		}
		modelled++
		g, _ := shaders.GPUByName(blk.GPU)
		if !(blk.BlockMS > 0) || math.Abs(blk.AttentionM+blk.MLPMS-blk.BlockMS) > 2e-3 /* each rounded to 1 us */ || blk.Passes < 2 || blk.Dispatches < 8 ||
			math.Abs(blk.Peak-blk.GFLOP*1e9/(blk.BlockMS/1e3)/g.PeakFP32()) > 1e-3*blk.Peak {
			t.Errorf("%+v: want a positive block time = attention + MLP, two or more command buffers, the block's dispatches, its GFLOP over time over %s's peak", blk, g.Name)
		}
	}
	if wantMeasured := map[bool]int{true: 2, false: 0}[onMac]; modelled != 2*len(shaders.GPUs) || measured != wantMeasured {
		t.Fatalf("%d modelled and %d measured block rows, want 2 patch counts x %d GPUs and %d", modelled, measured, len(shaders.GPUs), wantMeasured)
	}
	for _, p := range []string{"16", "64"} {
		ks := got.Kernels[p]
		sum, names := 0.0, map[string]bool{}
		for _, k := range ks {
			sum += k.ModelMS
			names[strings.TrimSuffix(k.Kernel, "_m32")] = true // the small grids take the 32-row matmul
		}
		var block float64
		for _, blk := range got.Blocks {
			if blk.GPU == "M1 (8-core)" && p == map[bool]string{true: "16", false: "64"}[blk.Patches == 16] {
				block = blk.BlockMS
			}
		}
		if !names["attention_hd16"] || !names["matmul_f32"] || !names["layer_norm"] || !names["rope2d"] {
			t.Errorf("%s patches: kernels %v, want the flash attention, matmul, layer norm and rope", p, names)
		}
		if !(sum > 0 && sum <= block+1e-3) {
			t.Errorf("%s patches: kernels sum to %.4f ms, the block is %.4f ms", p, sum, block)
		}
		for _, k := range ks {
			if onMac != (k.MeasuredMS > 0) {
				t.Errorf("%s patches, %s %s: measured %.4f ms on a machine where Metal runs: %v", p, k.Kernel, k.Op, k.MeasuredMS, onMac)
			}
		}
	}
	if out, err := exec.Command(bin, "gpumodel", "--checkpoint", "testdata/e2e/tiny", "--gpu", "M9").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "the model knows M1, M2 Pro, M3 Max, M4 Max") {
		t.Errorf("--gpu M9: %v\n%s", err, out)
	}
}
