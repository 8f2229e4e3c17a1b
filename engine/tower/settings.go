package tower

// settings.go: what a user can change about a run, in one struct — the CLI's flags, the
// window's forms and both sides of Compare fill it, and the engine reads it.
//
// Settings holds how the tower runs (backend, threads, residency, slots, tile, pixels,
// memory, what it keeps) and, apart, what is done to it (intervene.Set, embedded: its
// fields read as the settings' own).
//
// Invariant: of these, only Backend, MaxPixels and the interventions may change a run's outputs; residency,
// slots, tile rows and threads change timings and memory only (the engine is bit-identical
// across them, tested). Mutation that would silently break it: letting the tile size decide
// a reduction's order — every setting would still run, Compare would show differences where
// there must be none.

import (
	"fmt"
	"strconv"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/intervene"
)

// DefaultTileRows is the MLP tile when none is given. Measured on the 16-core device (8B,
// BF16 weights on AMX, three rounds with the tile order rotated): at 16 threads the MLP half
// ran 0.011-0.013 s at 1,024 patches with one tile of 1,024 rows against 0.014-0.015 with two
// of 512, and 0.043-0.058 s at 5,120 against 0.055-0.065; at 2 threads no tile was faster
// beyond the noise. The price is the tile buffer: [1024 x I] floats, 17 MiB for the 8B.
const DefaultTileRows = 1024

// Bounds of the numeric settings: beyond them nothing useful runs, and a million threads
// would start a million goroutines.
const (
	MaxTileRows = 1 << 20
	MaxThreads  = 1024
	MaxSlots    = 64
	// MinMaxPixels is the least pixel budget: one 2x2 merge group of 16-pixel patches. Below it
	// smart_resize cannot keep to the budget (it never makes a page smaller than a group).
	MinMaxPixels = 1024
)

// Bound is one numeric setting's range, the one check every way of setting it goes through
// (Validate, the CLI's flags, Compare's keys, the window's form and its saved preferences):
// 0 means the setting's default, any other value lies in [Lo, Hi].
// Mutation that would silently break it: a surface with its own numbers (the window once
// refused max pixels below 1,024 while the CLI took 1).
type Bound struct {
	Name   string // as the window and Validate name it: "MLP tile rows"
	Flag   string // the CLI's flag and Compare's key: "tile"
	Lo, Hi int
	Zero   string // what 0 means
}

// The numeric settings' bounds.
var (
	TileBound      = Bound{"MLP tile rows", "tile", 1, MaxTileRows, "the default, " + strconv.Itoa(DefaultTileRows)}
	ThreadsBound   = Bound{"threads", "threads", 1, MaxThreads, "every core"}
	SlotsBound     = Bound{"pread slots", "slots", 2, MaxSlots, "the default, 2"}
	MaxPixelsBound = Bound{"max pixels", "max-pixels", MinMaxPixels, imageproc.MaxPagePixels, "the checkpoint processor's max_pixels"}
)

// Check refuses v outside the bound, naming it label ("" names it by Name).
func (b Bound) Check(label string, v int) error {
	if v == 0 || v >= b.Lo && v <= b.Hi {
		return nil
	}
	if label == "" {
		label = b.Name
	}
	return fmt.Errorf("%s %d: want %s", label, v, b.Wants())
}

// Wants is what the bound takes, as the errors say it: "1 to 1048576, or 0 for the default, 1024".
func (b Bound) Wants() string { return fmt.Sprintf("%d to %d, or 0 for %s", b.Lo, b.Hi, b.Zero) }

// Settings are a run's settings.
type Settings struct {
	Backend   string             // compute backend: a registered name (backend.Names), or backend.Auto
	Threads   int                // CPU threads (0: every core)
	Residency ckpt.ResidencyMode // mapped (default) or pread
	Slots     int                // pread ring size (at least 2)
	TileRows  int                // MLP rows per tile (default DefaultTileRows)
	MaxPixels int                // the page's pixel budget (0: the checkpoint processor's max_pixels)
	MaxMemory int64              // refuse a run estimated to hold more (0: what RAM, a cgroup's limit and ulimit -v leave)
	Keep      Keep               // what the run keeps on the host

	intervene.Set // what is done to the tower: none by default
}

// Keep is what a run keeps on the host besides the merger outputs: the taps (tap.go) of
// every block. Outputs and Attention are the usual ones by their old names; Taps names any.
type Keep struct {
	Outputs   bool   // the tap out: every block's output [S, D] (dump, activations, Compare)
	Attention bool   // the taps q and k: post-rope q|k [S, 2D] (attention maps, rollout)
	Taps      TapSet // more taps; a run keeps Set()
	Budget    int64  // a Session keeps at most this many bytes (0: half of what the memory limits leave once the run is counted)
}

// Set is every tap kept: Taps, out with Outputs, q and k with Attention; q and k go
// together (one q|k [S, 2D] per block, what the attention probes read).
func (k Keep) Set() TapSet {
	s := k.Taps
	if k.Outputs {
		s |= TapSetOf(TapOut)
	}
	if k.Attention {
		s |= TapSetOf(TapQ, TapK)
	}
	return s.withPairs()
}

// Only keeps exactly the taps of set (q and k together), Outputs and Attention saying so.
func (k Keep) Only(set TapSet) Keep {
	k.Taps = set.withPairs()
	k.Outputs, k.Attention = k.Taps.Has(TapOut), k.Taps.Has(TapQ)
	return k
}

// SourceFiles are the files a run under s reads besides its checkpoint and image: the
// activation patch's source image.
func (s Settings) SourceFiles() []string {
	if _, image, _, _, _, err := intervene.ParsePatchFrom(s.PatchFrom); err == nil && image != "" {
		return []string{image}
	}
	return nil
}

// InputFiles are every file (or folder) a run of image under dir's checkpoint and s reads:
// what no output of that work may replace (the CLI's outputs, the window's exports).
func InputFiles(dir, image string, s Settings) []string {
	var out []string
	for _, p := range append([]string{dir, image}, s.SourceFiles()...) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// DefaultSettings run on backend with mapped weights, the default tile and every core.
func DefaultSettings(backend string) Settings {
	return Settings{Backend: backend, Residency: ckpt.Mapped, Slots: 2, TileRows: DefaultTileRows}
}

// Validate refuses a number outside its bounds (0 keeps meaning the default); NewEngine
// calls it, so no caller can start a run with one.
func (s Settings) Validate() error { return s.ValidateAs(nil) }

// ValidateAs is Validate with each bound named by label(b) (nil: its Name): the CLI names
// its flags ("--tile"), Compare its side and key ("--a tile").
func (s Settings) ValidateAs(label func(Bound) string) error {
	for _, c := range []struct {
		b Bound
		v int
	}{{TileBound, s.TileRows}, {ThreadsBound, s.Threads}, {SlotsBound, s.Slots}, {MaxPixelsBound, s.MaxPixels}} {
		name := ""
		if label != nil {
			name = label(c.b)
		}
		if err := c.b.Check(name, c.v); err != nil {
			return err
		}
	}
	if s.MaxMemory < 0 {
		return fmt.Errorf("max memory %d: want 0 (the machine's) or more bytes", s.MaxMemory)
	}
	return nil
}

// Normalized is s with each default spelled out (mapped residency, two slots, the default
// tile) and Keep reduced to the taps it keeps: the settings a run runs under (Engine.Settings).
func (s Settings) Normalized() Settings {
	if s.Residency == "" {
		s.Residency = ckpt.Mapped
	}
	if s.Slots < 2 {
		s.Slots = 2
	}
	if s.TileRows <= 0 {
		s.TileRows = DefaultTileRows
	}
	s.Keep = s.Keep.Only(s.Keep.Set())
	return s
}

// Describe is a one-line summary ("cpu, mapped, tile 1024, all cores").
func (s Settings) Describe() string {
	threads := "all cores"
	if s.Threads > 0 {
		threads = fmt.Sprintf("%d threads", s.Threads)
	}
	d := fmt.Sprintf("%s, %s, tile %d, %s", s.Backend, s.Residency, s.TileRows, threads)
	for _, iv := range s.Interventions() {
		d += ", " + iv.Name
	}
	return d
}

// Intervention is one way a run departs from the plain tower, as the surfaces name it: its
// name ("ablate 3:5 (zero)") and what it does, for people.
type Intervention struct{ Name, Effect string }

// Interventions are the settings' interventions in one order (intervene.Set.List): the one
// list Describe, the CLI's header, the window's status and captions and a dump's provenance
// read, so a new intervention is named everywhere by its registration in intervene.Set.
func (s Settings) Interventions() []Intervention {
	var out []Intervention
	for _, iv := range s.Set.List() {
		out = append(out, Intervention{iv.Name(), iv.Effect()})
	}
	return out
}
