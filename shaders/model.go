package shaders

// model.go: the performance model — how long a dispatch should take on a named Apple GPU,
// and what bounds it. A roofline over the GPU's pipelines, per core-cycle:
//
//	ALU      MatrixFLOPs at the simdgroup-matrix FP32 rate measured inside a tuned matmul
//	         (101.7 FMA per core-cycle on Apple7/8, 79% of the 128 FMA lanes), plus the
//	         scalar slots at 128 per core-cycle: one issue stream, so the two add up
//	tgmem    threadgroup-memory bytes at 64 B per core-cycle (not published; Apple documents
//	         none and the measured shuffle path is 256 B: an assumption, held low)
//	cache    device-memory bytes as the threads move them at 32 B per core-cycle (the measured
//	         on-GPU data path per core)
//	DRAM     each operand once at the published bandwidth
//
// time = max(ALU, tgmem, cache) / (cores x clock) / the last wave's fill, or DRAM if longer,
// plus a launch cost per dispatch. Sources: Apple's published GPU core counts and memory
// bandwidth; clocks and per-cycle rates from Philip Turner's metal-benchmarks (M1, M2
// measurements; M3 and M4 clocks as in shared/notes/metal-review.md, FP32 per core-cycle
// unchanged since Apple7). Nothing here is a measurement of our kernels: on a Mac,
// `inspector gpumodel` prints the GPU's own times beside these.
//
// Invariant: fraction of peak is the op's useful FLOPs over (time x FP32 peak), never the
// issued matrix work. Mutation that would silently break it: dividing by the ALU ceiling
// alone (dropping max with the memory ceilings) — attention at head dim 72 would look
// compute-bound however much it streams through threadgroup memory.

import "time"

// GPU is one Apple GPU the model knows.
type GPU struct {
	Name    string
	Family  string
	Cores   int
	GHz     float64 // shader clock
	DRAMGBs float64 // published memory bandwidth, GB/s
}

// GPUs are the named GPUs of the model, smallest first.
var GPUs = []GPU{
	{"M1 (8-core)", "Apple7", 8, 1.278, 68.25},
	{"M2 Pro (19-core)", "Apple8", 19, 1.398, 200},
	{"M3 Max (40-core)", "Apple9", 40, 1.398, 400},
	{"M4 Max (40-core)", "Apple9", 40, 1.578, 546},
}

// GPUByName finds a GPU of the model by a prefix of its name ("M3 Max").
func GPUByName(name string) (GPU, bool) {
	for _, g := range GPUs {
		if len(name) > 0 && len(g.Name) >= len(name) && g.Name[:len(name)] == name {
			return g, true
		}
	}
	return GPU{}, false
}

// Per core-cycle rates and fixed costs (see the file comment).
const (
	fp32FLOPsPerCycle   = 256   // 128 FMA lanes
	fp16FLOPsPerCycle   = 256   // Apple7-9: FP16 FMA at the FP32 rate
	matrixFLOPsPerCycle = 203.4 // 101.7 matrix FMA per core-cycle
	slotsPerCycle       = 128
	tgBytesPerCycle     = 64
	cacheBytesPerCycle  = 32
	maxThreadsPerCore   = 1024 // resident threads assumed per core (Apple: 384-3072, by registers)
	tgMemPerCore        = 60 << 10
	launchCost          = 3 * time.Microsecond  // per dispatch in an encoder
	CommitCost          = 40 * time.Microsecond // per command buffer committed and waited on
)

// PeakFP32 is the GPU's FP32 FLOP/s; PeakFP16 its FP16 FLOP/s.
func (g GPU) PeakFP32() float64 { return float64(g.Cores) * fp32FLOPsPerCycle * g.GHz * 1e9 }
func (g GPU) PeakFP16() float64 { return float64(g.Cores) * fp16FLOPsPerCycle * g.GHz * 1e9 }

// Estimate is the model's time for a dispatch and what bounds it.
type Estimate struct {
	Time  time.Duration
	Bound string // "alu", "tgmem", "cache", "dram" or "launch"
}

// Estimate models one dispatch on g.
func (g GPU) Estimate(c Cost) Estimate {
	// core-cycles per ceiling, in the order a tie is reported
	bound, worst := "alu", c.MatrixFLOPs/matrixFLOPsPerCycle+c.ScalarSlots/slotsPerCycle
	if tg := c.ThreadgroupBytes / tgBytesPerCycle; tg > worst {
		bound, worst = "tgmem", tg
	}
	if cache := c.CacheBytes / cacheBytesPerCycle; cache > worst {
		bound, worst = "cache", cache
	}
	core := worst / (float64(g.Cores) * g.GHz * 1e9) / g.waveFill(c)
	if dram := c.DRAMBytes / (g.DRAMGBs * 1e9); dram > core {
		bound, core = "dram", dram
	}
	t := time.Duration(core*1e9) + launchCost
	if core*1e9 < float64(launchCost) {
		bound = "launch"
	}
	return Estimate{t, bound}
}

// waveFill is the share of the GPU's threadgroup slots the dispatch keeps busy over its
// waves: a last, partial wave leaves cores idle.
func (g GPU) waveFill(c Cost) float64 {
	if c.Threadgroups == 0 {
		return 1
	}
	perCore := maxThreadsPerCore / max(c.ThreadsPerGroup, 1)
	if c.ThreadgroupMemBytes > 0 {
		perCore = min(perCore, tgMemPerCore/c.ThreadgroupMemBytes)
	}
	slots := g.Cores * max(perCore, 1)
	waves := (c.Threadgroups + slots - 1) / slots
	return float64(c.Threadgroups) / float64(waves*slots)
}

// FractionOfPeak is useful FLOPs over the time at the GPU's FP32 peak.
func (g GPU) FractionOfPeak(flops float64, t time.Duration) float64 {
	if t <= 0 {
		return 0
	}
	return flops / t.Seconds() / g.PeakFP32()
}
