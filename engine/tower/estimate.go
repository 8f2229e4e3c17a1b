package tower

// estimate.go: what a run will hold under its Settings, estimated before anything is
// allocated: the Settings and the page read into the plain values engine/guard's estimate
// takes (guard.Shape), with the formulas there.
//
// Invariant: every Setting that changes what a run allocates reaches the estimate — the
// residency and its slots, the threads, the MLP tile, the kept taps, and each intervention
// that makes host copies (an occlusion mask, a token drop, a key mask, and each tenant that
// says so: intervene.HostMemory) — so the estimate a
// session is checked against is the run's. Mutation that would silently break it: leaving
// the kept taps out (Probes 0) — the probes a session keeps, most of what a large page holds
// when q|k are kept, would pass unchecked (TestMemoryEstimate).

import (
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/intervene"
)

// EstimateMemory is what a run of in on ck under s will hold.
func EstimateMemory(ck *ckpt.Checkpoint, in *ckpt.Input, s Settings) guard.MemoryEstimate {
	m := EstimatePatches(ck, in.Patches(), s)
	m.Held = 4 * int64(len(in.Pixels))
	if in.Image != nil && in.Image.Resized != nil { // the resized image the page shows
		m.Activations += int64(len(in.Image.Resized.Pix))
		m.Held += int64(len(in.Image.Resized.Pix))
	}
	return m
}

// EstimatePatches is what a run of a page of patches patches on ck under s will hold (the
// pixels included: bench's and gpumodel's pages, before they are made): s read into guard's
// Shape.
func EstimatePatches(ck *ckpt.Checkpoint, patches int, s Settings) guard.MemoryEstimate {
	s = s.Normalized()
	weights, mapping := ck.Resident(s.Residency, s.Slots)
	keep := s.Keep.Set()
	return guard.Estimate(guard.Shape{Config: ck.Config, Patches: patches, Weights: weights, Mapping: mapping,
		BF16: ck.DTypeCounts()[dtype.BF16] > 0, Threads: s.Threads, TileRows: s.TileRows,
		Probes: ProbeBytes(ck.Config, patches, keep), KeepsFFNAct: keep.Has(TapFFNAct),
		Occludes: !s.Mask.None(), DropsTokens: !s.KeepTop.None(), MasksKeys: !s.KeyMask.None(),
		HookFloats: hookFloats(s.Set, patches, ck.Config.Hidden)})
}

// hookFloats is what the interventions' hooks hold on the host (intervene.HostMemory).
func hookFloats(set intervene.Set, patches, hidden int) int64 {
	var n int64
	for _, iv := range set.List() {
		if h, ok := iv.(intervene.HostMemory); ok {
			n += h.HostFloats(patches, hidden)
		}
	}
	return n
}
