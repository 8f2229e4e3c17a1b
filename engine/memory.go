package engine

// memory.go: what a run will hold, estimated before anything is allocated, so a page too
// large for the machine is refused with the reason instead of being killed by the kernel
// (or swapping for minutes) half way through.
//
// Invariant: the estimate counts every allocation of a run that grows with the page or
// the model — the resident weights (the mapped vision span, or the pread slots and the
// globals), the page's backend buffers (tile included), the host copies (pixels,
// embeddings, the hidden state), the CPU attention scratch and the kept probes — with the
// same formulas the allocations use (Config.TileBytes, Config.ProbeBytes). Mutation that
// would silently break it: counting the tile buffer at its asked size instead of
// min(tile, patches) — small pages would be refused for memory they never take.

import (
	"fmt"
	"runtime"
)

// Patches is the page's sequence length S.
func (in *Input) Patches() int {
	n := 0
	for _, g := range in.Grids {
		n += g.Patches()
	}
	return n
}

// MemoryEstimate is what a run will hold, by kind, in bytes.
type MemoryEstimate struct {
	Weights, Activations, Scratch, Probes int64
}

// Total is the sum.
func (m MemoryEstimate) Total() int64 { return m.Weights + m.Activations + m.Scratch + m.Probes }

func (m MemoryEstimate) String() string {
	return fmt.Sprintf("%s (weights %s, activations %s, scratch %s, kept probes %s)", FormatBytes(m.Total()),
		FormatBytes(m.Weights), FormatBytes(m.Activations), FormatBytes(m.Scratch), FormatBytes(m.Probes))
}

// EstimateMemory is what a run of in on ck under s will hold.
func EstimateMemory(ck *Checkpoint, in *Input, s Settings) MemoryEstimate {
	c := ck.Config
	S, D, hd := int64(in.Patches()), int64(c.Hidden), int64(c.HeadDim())
	merged := S / int64(c.MergeSize*c.MergeSize)
	f := int64(4)
	var m MemoryEstimate
	m.Weights = ck.VisionBytes()
	if s.Residency == Pread {
		var block, all int64
		for i := range c.Depth {
			b := ck.tensorBytes(c.BlockTensors(i))
			block, all = max(block, b), all+b
		}
		var merger int64
		for _, prefix := range c.MergerPrefixes() {
			merger = max(merger, ck.tensorBytes(c.MergerTensors(prefix)))
		}
		m.Weights = int64(max(s.Slots, 2))*block + ck.tensorBytes(c.EmbedTensors()) + merger // the slots, the embeddings, one merger
	}
	page := f * (7*S*D + 2*S*hd + merged*int64(c.MergedDim()) + merged*int64(c.OutHidden)) // h, ln, qkv, attn, tmp; cos, sin; merger
	host := f * (S*int64(c.PatchDim()) + 3*S*D)                                            // pixels, embed, previous and current hidden state
	m.Activations = page + host + c.TileBytes(s.TileRows, int(S))
	threads := int64(s.Threads)
	if threads <= 0 {
		threads = int64(runtime.NumCPU())
	}
	hdp := (hd + 31) / 32 * 32
	// CPU, per thread: attention's packed K and V of one segment and head, its query tile's
	// outputs and one score tile (the flash path; the others need less), or MatMul's panel.
	m.Scratch = threads * f * max(S*(hd+hdp)+192*hdp+6*256, 64*1024+1024+6*32)
	// CPU: fc1 and fc2 widened to float32 once per pass (engine/cpu's packcache.go), the
	// output rounded up to whole 64-wide panels.
	m.Scratch += 2 * f * (int64(c.Intermediate) + 63) / 64 * 64 * D
	m.Probes = c.ProbeBytes(int(S), s.Keep.Set())
	return m
}

// tensorBytes sums the stored size of the named tensors.
func (ck *Checkpoint) tensorBytes(specs []TensorSpec) int64 {
	var n int64
	for _, sp := range specs {
		n += ck.tensors[sp.Name].Bytes()
	}
	return n
}

// checkMemory refuses a run that would hold more than limit (0: the machine's memory).
func checkMemory(est MemoryEstimate, limit int64) error {
	what := "the limit set"
	if limit <= 0 {
		limit, what = PhysicalMemory(), "this machine's memory"
	}
	if limit <= 0 || est.Total() <= limit {
		return nil
	}
	return fmt.Errorf("this run would hold about %s, more than %s (%s): lower max pixels, use pread residency or a smaller MLP tile, or keep fewer probes",
		est, what, FormatBytes(limit))
}
