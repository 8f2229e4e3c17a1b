package engine

// face.go: the engine's face. The root keeps a page's session (session.go: open, step,
// restart, close), what an intervention changes (whatif.go) and Compare (compare.go); the rest
// lives in rooms, and the names the rest of the program knows them by (engine.Run,
// engine.Settings, engine.Checkpoint, engine.EstimateMemory, ...) are the rooms' own, aliased
// here, so no caller outside the engine names a room:
//
//   - engine/record: what a run leaves — its report (JSON, CSV, trace), its dump and the
//     dump's provenance;
//   - engine/tower: the run — Engine, Run, the block graph, the taps, the Settings, the
//     estimate of what a run holds, the non-finite checks, the memory faults, activation
//     patching on a run;
//   - engine/intervene: the interventions behind one seam (their settings and parsers);
//   - engine/guard: the memory limits, the estimates' formulas and the holds, and the
//     non-finite report;
//   - engine/ckpt: the checkpoint, its page, its weights and how they are held;
//   - engine/model: the families.
//
// Invariant: every name here is an alias, a call straight through to its room, or the room's
// own value (a var: the bounds, ProbeTaps, the parsers, Version), so what a caller gets by an
// engine name is what the room keeps (an alias of a type keeps its methods).
// Mutation that would silently break it: a second, hand-kept copy of a room's type or formula
// here — the copy and the room would drift, and a page refused by one would pass the other.

import (
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/record"
	"github.com/turbospark/inspector/engine/tower"
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

// ---- engine/model: the families ----

// Config is what the engine needs of config.json (engine/model).
type Config = model.Config

// TensorSpec is a vision tensor's name, shape and role (engine/model).
type TensorSpec = model.TensorSpec

// SupportedFamilies names every family the engine runs, with its model_type values.
func SupportedFamilies() string { return model.SupportedFamilies() }

// ---- engine/intervene: the interventions' settings ----

// The intervention settings (intervene's tenants).
type (
	Ablation   = intervene.Ablation
	Mask       = intervene.Mask
	KeyMask    = intervene.KeyMask
	KeepTop    = intervene.KeepTop
	ScaleHeads = intervene.ScaleHeads
)

// Ablation modes.
const (
	AblateZero = intervene.AblateZero
	AblateMean = intervene.AblateMean
)

// The settings' parsers and the error messages' quoting.
var (
	ParseAblation   = intervene.ParseAblation
	ParseMask       = intervene.ParseMask
	ParseKeyMask    = intervene.ParseKeyMask
	ParseKeepTop    = intervene.ParseKeepTop
	ParseScaleHeads = intervene.ParseScaleHeads
	ParsePatchFrom  = intervene.ParsePatchFrom
	QuoteShort      = intervene.QuoteShort
)

// ---- engine/tower: the run ----

// Engine is a checkpoint, its resident weights and a backend (engine/tower).
type Engine = tower.Engine

// NewEngine makes ck's weights resident under s on be, which it owns from the call on
// (engine/tower).
func NewEngine(ck *Checkpoint, be backend.Backend, s Settings) (*Engine, error) {
	return tower.NewEngine(ck, be, s)
}

// Run is one page going through the tower (engine/tower).
type Run = tower.Run

// BlockTiming is where one block's time went (engine/tower).
type BlockTiming = tower.BlockTiming

// BlockResult is what an observer sees after each block (engine/tower).
type BlockResult = tower.BlockResult

// OpTimes is the time spent per op kind on a synchronous backend (engine/tower).
type OpTimes = tower.OpTimes

// Settings are a run's settings: how the tower runs and what is done to it (engine/tower).
type Settings = tower.Settings

// Keep is what a run keeps on the host besides the merger outputs (engine/tower).
type Keep = tower.Keep

// Intervention is one way a run departs from the plain tower, as the surfaces name it
// (engine/tower).
type Intervention = tower.Intervention

// DefaultSettings run on backend with mapped weights, the default tile and every core.
func DefaultSettings(backend string) Settings { return tower.DefaultSettings(backend) }

// InputFiles are every file (or folder) a run of image under dir's checkpoint and s reads
// (engine/tower).
func InputFiles(dir, image string, s Settings) []string { return tower.InputFiles(dir, image, s) }

// Bound is one numeric setting's range (engine/tower).
type Bound = tower.Bound

// The numeric settings' defaults and bounds (engine/tower).
const (
	DefaultTileRows = tower.DefaultTileRows
	MaxTileRows     = tower.MaxTileRows
	MaxThreads      = tower.MaxThreads
	MaxSlots        = tower.MaxSlots
	MinMaxPixels    = tower.MinMaxPixels
)

// The numeric settings' bounds (engine/tower).
var (
	TileBound      = tower.TileBound
	ThreadsBound   = tower.ThreadsBound
	SlotsBound     = tower.SlotsBound
	MaxPixelsBound = tower.MaxPixelsBound
)

// EstimateMemory is what a run of in on ck under s will hold (engine/tower).
func EstimateMemory(ck *Checkpoint, in *Input, s Settings) MemoryEstimate {
	return tower.EstimateMemory(ck, in, s)
}

// EstimatePatches is what a run of a page of patches on ck under s will hold (engine/tower).
func EstimatePatches(ck *Checkpoint, patches int, s Settings) MemoryEstimate {
	return tower.EstimatePatches(ck, patches, s)
}

// Tap is one named intermediate of a block; TapSet a set of them (engine/tower).
type (
	Tap    = tower.Tap
	TapSet = tower.TapSet
)

// The taps of a block, in graph order, and every tap (engine/tower).
const (
	TapLN1      = tower.TapLN1
	TapQ        = tower.TapQ
	TapK        = tower.TapK
	TapV        = tower.TapV
	TapAttn     = tower.TapAttn
	TapAttnProj = tower.TapAttnProj
	TapFFNIn    = tower.TapFFNIn
	TapLN2      = tower.TapLN2
	TapFFNAct   = tower.TapFFNAct
	TapFFNOut   = tower.TapFFNOut
	TapOut      = tower.TapOut
	AllTaps     = tower.AllTaps
)

// ProbeTaps are what the window's probes read: out, q and k (engine/tower).
var ProbeTaps = tower.ProbeTaps

// Taps lists every tap in graph order.
func Taps() []Tap { return tower.Taps() }

// TapNames are the taps' names in graph order.
func TapNames() []string { return tower.TapNames() }

// TapSetOf is the set of ts.
func TapSetOf(ts ...Tap) TapSet { return tower.TapSetOf(ts...) }

// ParseTap is the tap named name (engine/tower).
func ParseTap(name string) (Tap, error) { return tower.ParseTap(name) }

// ParseTaps reads a comma-separated list of tap names, or "all" (engine/tower).
func ParseTaps(list string) (TapSet, error) { return tower.ParseTaps(list) }

// TapBytes is what keeping tap t of every block of c costs on the host for a page of patches.
func TapBytes(c Config, t Tap, patches int) int64 { return tower.TapBytes(c, t, patches) }

// ProbeBytes is what a run of c keeping taps costs on the host for a page of patches.
func ProbeBytes(c Config, patches int, taps TapSet) int64 { return tower.ProbeBytes(c, patches, taps) }

// ---- engine/record: what a run leaves ----

// Report is a run's settings and timings (engine/record); ReportSettings, ReportImage,
// ReportBlock and ReportTotals are its parts.
type (
	Report         = record.Report
	ReportSettings = record.ReportSettings
	ReportImage    = record.ReportImage
	ReportBlock    = record.ReportBlock
	ReportTotals   = record.ReportTotals
)

// NewReport records a run's settings; checkpoint and image name the inputs (engine/record).
func NewReport(e *Engine, in *Input, checkpoint, image string) *Report {
	return record.NewReport(e, in, checkpoint, image)
}

// Millis is a duration in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return record.Millis(d) }

// PeakRSS is the process's peak resident set in bytes.
func PeakRSS() int64 { return record.PeakRSS() }

// Dump is a finished run's tensors, immutable: what run --dump and the window's export write
// (engine/record).
type Dump = record.Dump

// NewDump is r's tensors; it needs a finished run with every block's output kept
// (engine/record).
func NewDump(r *Run) (*Dump, error) { return record.NewDump(r) }

// WriteDump writes r's tensors to path (engine/record: query < 0 leaves out the attention
// rows; taps are written as blocks.{i}.{tap}).
func WriteDump(r *Run, path string, query int, taps TapSet) error {
	return record.WriteDump(r, path, query, taps)
}

// Version is the inspector's version, as dumps record it: engine/record's (set that one with
// -ldflags -X), read when the program starts.
var Version = record.Version
