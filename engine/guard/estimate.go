package guard

// estimate.go: what a run will hold, estimated before anything is allocated, so a page too
// large for the machine is refused with the reason instead of being killed by the kernel
// (or swapping for minutes) half way through.
//
// Invariant: the estimate counts every allocation of a run that grows with the page or
// the model — the resident weights (the mapped vision span, or the pread slots and the
// globals), the page's backend buffers (tile included), the host copies (pixels,
// embeddings, the hidden state), the CPU attention scratch and the kept probes — with the
// same formulas the allocations use (Config.TileBytes, the engine's ProbeBytes). Mutation that
// would silently break it: counting the tile buffer at its asked size instead of
// min(tile, patches) — small pages would be refused for memory they never take.

import (
	"fmt"
	"runtime"

	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/engine/model"
)

// MemoryEstimate is what a run will hold, by kind, in bytes.
type MemoryEstimate struct {
	Weights, Activations, Scratch, Probes int64
	// Mapping is the address space the weights take: the mapped residency maps each shard's
	// vision span whole (what ulimit -v counts), pread its slots (= Weights). Not in Total.
	Mapping int64
	// Outside is the part of Total that lies outside the Go heap (the weights, the CPU's
	// widened fc1/fc2 in a mapping of their own); Largest the largest single allocation the
	// run will make on the heap (the room a heap with free but scattered pages still wants);
	// Held the part of Total allocated before the run is checked (a page's pixels and image:
	// under ulimit -v they are in what the process maps already).
	Outside, Largest, Held int64
}

// Total is the sum.
func (m MemoryEstimate) Total() int64 { return m.Weights + m.Activations + m.Scratch + m.Probes }

func (m MemoryEstimate) String() string {
	return fmt.Sprintf("%s (weights %s, activations %s, scratch %s, kept probes %s)", FormatBytes(m.Total()),
		FormatBytes(m.Weights), FormatBytes(m.Activations), FormatBytes(m.Scratch), FormatBytes(m.Probes))
}

// FormatBytes prints a byte count with a binary unit.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Shape is what an estimate reads of a run, as plain values (the engine's Settings and
// Checkpoint stay above this package): the tower, the page, how the weights are held, what the
// run keeps and what is done to the page.
type Shape struct {
	Config  model.Config
	Patches int
	// Weights is what the residency holds of the weights, Mapping the address space it takes
	// (ckpt.Checkpoint.Resident).
	Weights, Mapping int64
	BF16             bool  // the checkpoint holds bfloat16 weights (engine/cpu's AMX path)
	Threads          int   // 0: every core
	TileRows         int   // the MLP tile asked for (> 0)
	Probes           int64 // what the kept probes take on the host (the engine's ProbeBytes)
	KeepsFFNAct      bool  // an ffn_act is kept: S x Intermediate floats in one heap block
	Occludes         bool  // an occlusion mask: the occluded copy of the pixels
	DropsTokens      bool  // a token drop: the dropped rows' frozen state, the ranking block's q|k
	MasksKeys        bool  // a key mask: the kept keys' q|k|v, the backend's and the host's gather
	// HookFloats is what the interventions' hooks hold on the host besides the run, in float32s
	// (intervene.HostMemory: a scaled head's copy of attn, a patch's source rows).
	HookFloats int64
}

// Estimate is what a run of sh will hold.
func Estimate(sh Shape) MemoryEstimate {
	c := sh.Config
	S, D, hd := int64(sh.Patches), int64(c.Hidden), int64(c.HeadDim())
	merged := S / int64(c.MergeSize*c.MergeSize)
	f := int64(4)
	var m MemoryEstimate
	m.Weights, m.Mapping = sh.Weights, sh.Mapping
	page := f * (7*S*D + 2*S*hd + merged*int64(c.MergedDim()) + merged*int64(c.OutHidden)) // h, ln, qkv, attn, tmp; cos, sin; merger
	page += f * S * int64(c.PatchDim())                                                    // the pixels' buffer while the embedding runs
	host := f * (S*int64(c.PatchDim()) + 3*S*D)                                            // pixels, embed, previous and current hidden state
	if sh.Occludes {
		host += f * S * int64(c.PatchDim()) // the occluded copy of the pixels (intervene/mask.go)
	}
	if c.ArrangesRows() {
		host += f * S * int64(c.PatchDim()) // the pixels gathered into the blocks' order
	}
	if sh.DropsTokens { // the dropped rows' frozen state, and the ranking block's q|k (intervene/tokendrop.go)
		host += f * 3 * S * D
	}
	if sh.MasksKeys { // the kept keys' q|k|v: the backend's buffer and the host's gather (intervene/keymask.go)
		page += f * 3 * S * D
		host += f * 3 * S * D
	}
	host += f * sh.HookFloats
	m.Activations = page + host + c.TileBytes(sh.TileRows, int(S))
	threads := int64(sh.Threads)
	if threads <= 0 {
		threads = int64(runtime.NumCPU())
	}
	hdp := (hd + 31) / 32 * 32
	// CPU, per thread: attention's packed K and V of one segment and head, its query tile's
	// outputs and one score tile (the flash path; the others need less), or MatMul's panel.
	m.Scratch = threads * f * max(S*(hd+hdp)+192*hdp+6*256, 64*1024+1024+6*32)
	// CPU: fc1 and fc2 widened to float32 once per pass (engine/cpu's packcache.go), the
	// output rounded up to whole 64-wide panels, in a mapping of their own (hugealloc).
	mlpMats := int64(2)
	if c.Gated() {
		mlpMats = 3 // gate, up, down: packcache keeps three
	}
	pack := mlpMats * f * (int64(c.Intermediate) + 63) / 64 * 64 * D
	m.Scratch += pack
	if kernel.UseAMX && sh.BF16 {
		m.Scratch += amxScratch(c, S)
	}
	m.Probes = sh.Probes
	m.Outside = m.Weights + pack
	// The largest heap blocks still to come: the pixels' buffer (the backend's copy, and the
	// page itself where it is not made yet: bench), the qkv buffer (downloaded whole for the q, k, v
	// taps), the MLP tile, the merger's input, a kept ffn_act.
	m.Largest = f * max(S*int64(c.PatchDim()), 3*S*D, int64(min(sh.TileRows, sh.Patches))*int64(c.Intermediate), merged*int64(c.MergedDim()))
	if sh.KeepsFFNAct {
		m.Largest = max(m.Largest, f*S*int64(c.Intermediate))
	}
	return m
}

// amxScratch is what engine/cpu's AMX path (BF16 weights) holds beyond the pack cache, whose
// bfloat16 tiles take half of the widened panels counted above: x's pieces for
// kernel.AMXSplitRows rows at the widest in (the merger's), and the merger's first weight in
// tiles for its call (too large for the cache).
func amxScratch(c model.Config, S int64) int64 {
	pad := func(n int) int64 { return (int64(n) + 31) / 32 * 32 }
	rows := min(pad(kernel.AMXSplitRows), pad(int(S)))
	in := max(pad(c.Hidden), pad(c.Intermediate), pad(c.MergedDim()))
	return 6*rows*in + 2*pad(c.MergedDim())*pad(max(c.MergedDim(), c.OutHidden))
}
