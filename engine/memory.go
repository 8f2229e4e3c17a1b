package engine

// memory.go: what a run will hold, estimated before anything is allocated, so a page too
// large for the machine is refused with the reason instead of being killed by the kernel
// (or swapping for minutes) half way through.
//
// Invariant: the estimate counts every allocation of a run that grows with the page or
// the model — the resident weights (the mapped vision span, or the pread slots and the
// globals), the page's backend buffers (tile included), the host copies (pixels,
// embeddings, the hidden state), the CPU attention scratch and the kept probes — with the
// same formulas the allocations use (Config.TileBytes, ProbeBytes). Mutation that
// would silently break it: counting the tile buffer at its asked size instead of
// min(tile, patches) — small pages would be refused for memory they never take.

import (
	"fmt"
	"runtime"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/internal/kernel"
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

// EstimateMemory is what a run of in on ck under s will hold.
func EstimateMemory(ck *Checkpoint, in *Input, s Settings) MemoryEstimate {
	m := EstimatePatches(ck, in.Patches(), s)
	m.Held = 4 * int64(len(in.Pixels))
	if in.Image != nil && in.Image.Resized != nil { // the resized image the page shows
		m.Activations += int64(len(in.Image.Resized.Pix))
		m.Held += int64(len(in.Image.Resized.Pix))
	}
	return m
}

// EstimatePatches is what a run of a page of patches patches on ck under s will hold (the
// pixels included: bench's and gpumodel's pages, before they are made).
func EstimatePatches(ck *Checkpoint, patches int, s Settings) MemoryEstimate {
	s = s.normalized()
	c := ck.Config
	S, D, hd := int64(patches), int64(c.Hidden), int64(c.HeadDim())
	merged := S / int64(c.MergeSize*c.MergeSize)
	f := int64(4)
	var m MemoryEstimate
	m.Weights = ck.VisionBytes()
	m.Mapping = ck.mappingBytes()
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
		m.Mapping = m.Weights
	}
	page := f * (7*S*D + 2*S*hd + merged*int64(c.MergedDim()) + merged*int64(c.OutHidden)) // h, ln, qkv, attn, tmp; cos, sin; merger
	page += f * S * int64(c.PatchDim())                                                    // the pixels' buffer while the embedding runs
	host := f * (S*int64(c.PatchDim()) + 3*S*D)                                            // pixels, embed, previous and current hidden state
	if !s.Mask.None() {
		host += f * S * int64(c.PatchDim()) // the occluded copy of the pixels (intervene/mask.go)
	}
	if c.ArrangesRows() {
		host += f * S * int64(c.PatchDim()) // the pixels gathered into the blocks' order
	}
	if !s.KeepTop.None() { // the dropped rows' frozen state, and the ranking block's q|k (intervene/tokendrop.go, rows.go)
		host += f * 3 * S * D
	}
	if !s.KeyMask.None() { // the kept keys' q|k|v: the backend's buffer and the host's gather (geom.Views.MaskKeys, graph.keysOf)
		page += f * 3 * S * D
		host += f * 3 * S * D
	}
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
	// output rounded up to whole 64-wide panels, in a mapping of their own (hugealloc).
	mlpMats := int64(2)
	if c.Gated() {
		mlpMats = 3 // gate, up, down: packcache keeps three
	}
	pack := mlpMats * f * (int64(c.Intermediate) + 63) / 64 * 64 * D
	m.Scratch += pack
	if kernel.UseAMX && ck.DTypeCounts()[dtype.BF16] > 0 {
		m.Scratch += amxScratch(c, S)
	}
	m.Probes = ProbeBytes(c, int(S), s.Keep.Set())
	m.Outside = m.Weights + pack
	// The largest heap blocks still to come: the pixels' buffer (the backend's copy, and the
	// page itself where it is not made yet: bench), the qkv buffer (downloaded whole for the q, k, v
	// taps), the MLP tile, the merger's input, a kept ffn_act.
	m.Largest = f * max(S*int64(c.PatchDim()), 3*S*D, int64(min(s.TileRows, patches))*int64(c.Intermediate), merged*int64(c.MergedDim()))
	if s.Keep.Set().Has(TapFFNAct) {
		m.Largest = max(m.Largest, f*S*int64(c.Intermediate))
	}
	return m
}

// amxScratch is what engine/cpu's AMX path (BF16 weights) holds beyond the pack cache, whose
// bfloat16 tiles take half of the widened panels counted above: x's pieces for
// kernel.AMXSplitRows rows at the widest in (the merger's), and the merger's first weight in
// tiles for its call (too large for the cache).
func amxScratch(c Config, S int64) int64 {
	pad := func(n int) int64 { return (int64(n) + 31) / 32 * 32 }
	rows := min(pad(kernel.AMXSplitRows), pad(int(S)))
	in := max(pad(c.Hidden), pad(c.Intermediate), pad(c.MergedDim()))
	return 6*rows*in + 2*pad(c.MergedDim())*pad(max(c.MergedDim(), c.OutHidden))
}

// tensorBytes sums the stored size of the named tensors.
func (ck *Checkpoint) tensorBytes(specs []TensorSpec) int64 {
	var n int64
	for _, sp := range specs {
		n += ck.tensors[sp.Name].Bytes()
	}
	return n
}

// checkMemory refuses a run estimated at est that does not fit under every limit in force,
// naming the limit it is furthest past, what it would need there, and tip (what to change).
func checkMemory(est MemoryEstimate, limits []memLimit, tip string) error {
	var bind *memLimit
	for i, l := range limits {
		if short := l.need(est) - l.free; short > 0 && (bind == nil || short > bind.need(est)-bind.free) {
			bind = &limits[i]
		}
	}
	if bind == nil {
		return nil
	}
	need, space := bind.need(est), ""
	if bind.kind == limitAS {
		made := ""
		if est.Held > 0 {
			made = ", less the page made already"
		}
		space = fmt.Sprintf(" and %s more address space (its weights' mapping whole and room for the heap's largest blocks%s)", FormatBytes(need), made)
	}
	return fmt.Errorf("this run would hold about %s%s, more than %s: %s; %s", est, space, bind.why, bind.needs(need), tip)
}

// runTip is what a run refused for memory may change.
const runTip = "lower max pixels, use pread residency or a smaller MLP tile, or keep fewer probes"

// CheckMemory refuses a run estimated at est (EstimatePatches, with what the caller adds) that
// does not fit in this process now (MemoryBudget's limits, maxMemory: Settings.MaxMemory),
// and sets the Go runtime's soft memory limit from the same limits: for runs that start an
// Engine without a Session (bench, gpumodel, on pages they make themselves).
func CheckMemory(est MemoryEstimate, maxMemory int64) error {
	limits := memoryLimits(maxMemory, nil)
	if err := checkMemory(est, limits, "use fewer patches, pread residency or a smaller MLP tile"); err != nil {
		return err
	}
	// What the run will map outside the heap (its weights, the CPU's widened weights) is not
	// mapped yet: the heap's limit leaves it room.
	for i := range limits {
		if limits[i].kind == limitAS {
			limits[i].goMax -= max(est.Mapping, est.Weights) + est.Outside - est.Weights
		} else {
			limits[i].goMax -= est.Outside
		}
	}
	applyGoLimitFrom(limits)
	return nil
}
