package shaders

// model_test.go: the cost of each dispatch follows its kernel as written, and the model's
// estimates behave as a roofline: useful FLOPs never above the issued matrix work, memory
// bounds win where the kernel streams, the fraction of peak never above the matrix rate.

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
)

// The tile constants cost.go counts with are the ones the kernels use.
func TestCostFollowsTheKernels(t *testing.T) {
	lib := Library()
	for name, want := range map[string]int{"MM_TILE": matmulTile, "MM_K": matmulK, "MM_THREADS": matmulThreads,
		"FLASH_QUERIES": flashQueries, "FLASH_THREADS": flashThreads, "MMS_TILE": matmulScalarTile, "MMS_K": matmulScalarK,
		"MMS_SIDE": 16} {
		m := regexp.MustCompile(`constant constexpr uint ` + name + ` = (\d+);`).FindStringSubmatch(lib)
		if m == nil {
			t.Errorf("%s is not in the library", name)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != want {
			t.Errorf("%s = %d in the kernels, %d in dispatch.go", name, got, want)
		}
	}
	if matmulScalarThread != 16*16 {
		t.Errorf("matmul_scalar runs MMS_SIDE x MMS_SIDE = 256 threads; dispatch.go says %d", matmulScalarThread)
	}
	inst := regexp.MustCompile(`flash_attention<(\d+), (\d+)>\(o, q`).FindAllStringSubmatch(lib, -1)
	if len(inst) != len(FlashHeadDims) {
		t.Fatalf("%d flash kernels in the library, FlashHeadDims has %d", len(inst), len(FlashHeadDims))
	}
	for i, m := range inst {
		hd, _ := strconv.Atoi(m[1])
		bk, _ := strconv.Atoi(m[2])
		if hd != FlashHeadDims[i] || bk != flashKeyTile(hd) {
			t.Errorf("attention_hd%d: key tile %d in the kernel; FlashHeadDims[%d] = %d, flashKeyTile = %d", hd, bk, i, FlashHeadDims[i], flashKeyTile(hd))
		}
		if mem := (2*bk*hd + flashQueries*bk + 256) * 4; mem > 32<<10 {
			t.Errorf("attention_hd%d: %d bytes of threadgroup memory, Metal allows 32 KiB", hd, mem)
		}
	}
}

func TestCostCountsUsefulWork(t *testing.T) {
	o := Operand{Handle: 1}
	for _, s := range [][3]int{{5120, 1152, 3456}, {1, 1, 1}, {70, 45, 130}} {
		c := MatMul(o, o, o, o, BF16, BF16, s[0], s[1], s[2], Epilogue{}).Cost
		if want := 2 * float64(s[0]) * float64(s[1]) * float64(s[2]); c.FLOPs != want {
			t.Errorf("matmul %v: %g FLOPs, want 2*rows*in*out = %g", s, c.FLOPs, want)
		}
		if c.MatrixFLOPs < c.FLOPs {
			t.Errorf("matmul %v: issued %g < useful %g", s, c.MatrixFLOPs, c.FLOPs)
		}
	}
	// On whole tiles the matmul issues exactly its useful work.
	if c := MatMul(o, o, o, o, F32, F32, 128, 64, 64, Epilogue{}).Cost; c.MatrixFLOPs != c.FLOPs {
		t.Errorf("matmul on whole tiles: issued %g, useful %g", c.MatrixFLOPs, c.FLOPs)
	}
	seg := backend.Segment{Start: 0, End: 1000}
	for _, hd := range []int{72, 40} {
		c := Attention(o, o, o, o, 3*16*hd, seg, backend.Segment{Start: 100, End: 400}, 1000, 16, hd, 0.1).Cost
		if want := 4.0 * 300 * 1000 * float64(hd) * 16; c.FLOPs != want {
			t.Errorf("attention hd %d: %g FLOPs, want 4*q*k*hd*heads = %g", hd, c.FLOPs, want)
		}
		if hd == 72 && c.MatrixFLOPs < c.FLOPs {
			t.Errorf("flash attention: issued %g < useful %g", c.MatrixFLOPs, c.FLOPs)
		}
	}
}

func TestModelIsARoofline(t *testing.T) {
	o := Operand{Handle: 1}
	for _, g := range GPUs {
		// Big matmuls: compute-bound, never above the matrix rate.
		mm := MatMul(o, o, o, o, BF16, BF16, 5120, 1152, 4304, Epilogue{})
		e := g.Estimate(mm.Cost)
		frac := g.FractionOfPeak(mm.Cost.FLOPs, e.Time)
		if e.Bound != "alu" || frac > matrixFLOPsPerCycle/fp32FLOPsPerCycle || frac < 0.3 {
			t.Errorf("%s: matmul 5120x1152x4304: bound %s, %.0f%% of peak", g.Name, e.Bound, 100*frac)
		}
		// Twice the rows, about twice the time.
		mm2 := MatMul(o, o, o, o, BF16, BF16, 10240, 1152, 4304, Epilogue{})
		if r := g.Estimate(mm2.Cost).Time.Seconds() / e.Time.Seconds(); r < 1.8 || r > 2.2 {
			t.Errorf("%s: twice the rows took %.2fx the time", g.Name, r)
		}
		// LayerNorm streams: DRAM or the caches bound it, not the ALU.
		if b := g.Estimate(LayerNorm(o, o, o, o, F32, F32, 5120, 1152, 1e-6).Cost).Bound; b == "alu" {
			t.Errorf("%s: layer norm modelled as %s-bound", g.Name, b)
		}
		// A dispatch whose threadgroup traffic dwarfs its math is threadgroup-bound.
		c := mm.Cost
		c.ThreadgroupBytes *= 100
		if b := g.Estimate(c).Bound; b != "tgmem" {
			t.Errorf("%s: 100x the threadgroup traffic: bound %s", g.Name, b)
		}
		// A tiny op costs its launch.
		if e := g.Estimate(Add(o, o, 4).Cost); e.Bound != "launch" || e.Time < launchCost {
			t.Errorf("%s: add of 4 floats: %v, bound %s", g.Name, e.Time, e.Bound)
		}
	}
}

// A partial last wave leaves cores idle: 41 threadgroups on 40 one-slot cores take two waves.
func TestModelCountsTheLastWave(t *testing.T) {
	g := GPU{"test", "Apple9", 40, 1, 100}
	one := Cost{MatrixFLOPs: 1e9, Threadgroups: 40, ThreadsPerGroup: 1024}
	two := one
	two.MatrixFLOPs *= 41.0 / 40
	two.Threadgroups = 41
	r := g.Estimate(two).Time.Seconds() / g.Estimate(one).Time.Seconds()
	if r < 1.9 {
		t.Errorf("41 threadgroups on 40 slots took %.2fx the time of 40: the last wave is not counted", r)
	}
}
