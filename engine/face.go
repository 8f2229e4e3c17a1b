package engine

// face.go: the engine's face for what lives in its rooms. engine/guard keeps the memory limits,
// the estimates and the holds, and says when a value stops being finite; engine/ckpt keeps the
// checkpoint, its weights and how they are held. The names the rest of the program knows them
// by (engine.Checkpoint, engine.EstimateMemory, ...) are the rooms' own, aliased here, so no
// caller outside the engine names a room.
//
// Invariant: every name here is an alias or a call straight through, except that a run's
// Settings are read into the plain values guard's estimate takes (EstimatePatches), so the
// estimate the engine checks a run against is the one a caller reads. Mutation that would
// silently break it: a second, hand-kept copy of a room's type or formula here — the copy and
// the room would drift, and a page refused by one would pass the other.

import (
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/guard"
)

// ---- engine/guard: memory limits, estimates and holds; the non-finite report ----

// MemoryEstimate is what a run will hold, by kind, in bytes (engine/guard).
type MemoryEstimate = guard.MemoryEstimate

// NonFinite is where the first NaN or Inf of a run appeared (engine/guard).
type NonFinite = guard.NonFinite

// FormatBytes prints a byte count with a binary unit.
func FormatBytes(n int64) string { return guard.FormatBytes(n) }

// SetMallocArenas says the process capped glibc's malloc arenas at n (engine/guard).
func SetMallocArenas(n int) { guard.SetMallocArenas(n) }

// CheckMemory refuses a run estimated at est that does not fit in this process now, and sets
// the Go runtime's soft memory limit from the same limits (engine/guard).
func CheckMemory(est MemoryEstimate, maxMemory int64) error { return guard.CheckMemory(est, maxMemory) }

// CheckHold refuses work that would hold need bytes at once when the memory limits in force
// leave less (engine/guard).
func CheckHold(what string, need, maxMemory int64) error {
	return guard.CheckHold(what, need, maxMemory)
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
// pixels included: bench's and gpumodel's pages, before they are made): s read into guard's
// Shape.
func EstimatePatches(ck *Checkpoint, patches int, s Settings) MemoryEstimate {
	s = s.normalized()
	weights, mapping := ck.Resident(s.Residency, s.Slots)
	keep := s.Keep.Set()
	return guard.Estimate(guard.Shape{Config: ck.Config, Patches: patches, Weights: weights, Mapping: mapping,
		BF16: ck.DTypeCounts()[dtype.BF16] > 0, Threads: s.Threads, TileRows: s.TileRows,
		Probes: ProbeBytes(ck.Config, patches, keep), KeepsFFNAct: keep.Has(TapFFNAct),
		Occludes: !s.Mask.None(), DropsTokens: !s.KeepTop.None(), MasksKeys: !s.KeyMask.None()})
}
