package engine

// face.go: the engine's face for what lives in its rooms. engine/guard keeps the memory limits,
// the estimates and the holds, and says when a value stops being finite; engine/ckpt keeps the
// checkpoint, its weights and how they are held. The names the rest of the program knows them
// by (engine.Checkpoint, engine.EstimateMemory, ...) are the rooms' own, aliased here, so no
// caller outside the engine names a room.
//
// Invariant: every name here is an alias or a call straight through to its room (the run's
// Settings are read into guard's estimate in estimate.go), so what a caller gets by an engine
// name is what the room keeps. Mutation that would silently break it: a second, hand-kept copy
// of a room's type or formula here — the copy and the room would drift, and a page refused by
// one would pass the other.

import (
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/model"
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

// ---- engine/ckpt: the checkpoint, its weights and how they are held ----

// Checkpoint is an opened, checked checkpoint directory (engine/ckpt).
type Checkpoint = ckpt.Checkpoint

// OpenCheckpoint reads and checks the checkpoint in dir (engine/ckpt).
func OpenCheckpoint(dir string) (*Checkpoint, error) { return ckpt.OpenCheckpoint(dir) }

// Input is a page to run: pixel_values rows and their grids, and the image when there is one
// (engine/ckpt).
type Input = ckpt.Input

// HFCache is where the Hugging Face cache is, and which setting said so (engine/ckpt).
type HFCache = ckpt.HFCache

// FindHFCache is the hub cache huggingface_hub uses (engine/ckpt).
func FindHFCache() HFCache { return ckpt.FindHFCache() }

// ResolveCheckpoint turns what a user named as a checkpoint (a directory, a repo id) into a
// directory (engine/ckpt).
func ResolveCheckpoint(name string) (string, error) { return ckpt.ResolveCheckpoint(name) }

// ResidencyMode selects how block weights are held (engine/ckpt).
type ResidencyMode = ckpt.ResidencyMode

// The residency modes: each shard's vision span mapped, or each block pread into a slot.
const (
	Mapped = ckpt.Mapped
	Pread  = ckpt.Pread
)

// ParseResidency accepts "mapped" or "pread" (engine/ckpt).
func ParseResidency(s string) (ResidencyMode, error) { return ckpt.ParseResidency(s) }

// Residency hands out weights (engine/ckpt).
type Residency = ckpt.Residency

// NewResidency opens ck's weights in mode; slots is the pread ring size (engine/ckpt).
func NewResidency(ck *Checkpoint, mode ResidencyMode, slots int) (Residency, error) {
	return ckpt.NewResidency(ck, mode, slots)
}

// BlockWeights are one block's weights by role (engine/ckpt).
type BlockWeights = ckpt.BlockWeights

// MergerWeights are one merger's six weights (engine/ckpt).
type MergerWeights = ckpt.MergerWeights

// WidenedF32 is w widened exactly to float32 in a region of its own (engine/ckpt).
func WidenedF32(w backend.Weight) backend.Weight { return ckpt.WidenedF32(w) }

// The graph's short names for a block's weights: engine/model's roles.
const (
	wNorm1W = model.RoleNorm1W
	wNorm1B = model.RoleNorm1B
	wQKVW   = model.RoleQKVW
	wQKVB   = model.RoleQKVB
	wProjW  = model.RoleProjW
	wProjB  = model.RoleProjB
	wNorm2W = model.RoleNorm2W
	wNorm2B = model.RoleNorm2B
	wFC1W   = model.RoleFC1W // a gated MLP's gate
	wFC1B   = model.RoleFC1B
	wFC2W   = model.RoleFC2W // a gated MLP's down projection
	wFC2B   = model.RoleFC2B
	wUpW    = model.RoleUpW // a gated MLP's up projection
	wUpB    = model.RoleUpB
)

// ---- engine/model: the families ----

// Config is what the engine needs of config.json (engine/model).
type Config = model.Config

// TensorSpec is a vision tensor's name, shape and role (engine/model).
type TensorSpec = model.TensorSpec

// SupportedFamilies names every family the engine runs, with its model_type values.
func SupportedFamilies() string { return model.SupportedFamilies() }
