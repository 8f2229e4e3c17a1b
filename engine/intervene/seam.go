// Package intervene is the seam through which a run departs from the plain tower, and its
// tenants: head ablation, input occlusion, key masking, token dropping, activation and head
// patching, head scaling. The tower offers five hook points (the run calls them; a tenant
// implements the ones it uses), and a per-block view of the page (geom.Views) that a tenant
// may shape and that the graph and every probe read:
//
//	before the embedding   PixelsHook    pixel_values, the processor's order (occlusion)
//	the keys of a block    Plan shapes Tower.Views (geom.Views.MaskKeys: the key mask)
//	before proj            ProjHook      attn where the heads enter proj (ablation, head patch, scale)
//	after a block          OutputHook    the block's output before anything reads it (activation patch)
//	before the next block  RowsHook      after the block's deepstack merger: the rows later blocks run (token drop)
//
// A new intervention is one file here: its setting (parse, canonical spec, name), its Plan and
// its hook, plus its line in Set (set.go) and its test. The graph holds a list of hooks, not
// a field per kind; the probes read the views, never an intervention.
//
// Invariant: a tenant changes nothing before its From block (the run may then resume a
// sweep's runs from the base run's state at that block, whatif.go), and an empty setting
// plans no hook (a run without interventions is the plain tower bit for bit).
// Mutation that would silently break it: a From that is one block late — a sweep would take
// the intervened block's output from the unintervened base run (TestSweepRowsAgainstBase).
package intervene

import (
	"context"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
)

// Tower is the tower and the page a run's interventions are planned for.
type Tower struct {
	Depth, Heads, HeadDim, Hidden int
	MergeSize, PatchDim, Channels int
	Layout                        *geom.Layout
	Views                         *geom.Views // the run's views: Plan may shape them
}

// Intervention is one intervention as a setting holds it.
type Intervention interface {
	// Name is how settings, captions and dumps name it ("ablate 3:5 (zero)").
	Name() string
	// Effect says what it does, for people.
	Effect() string
	// From is the first block whose output it may change (0: from the embedding on).
	From() int
	// Plan checks it against t and returns the hook a run calls (nil: none), shaping
	// t.Views where it changes what blocks see.
	Plan(t Tower) (any, error)
}

// PixelsHook is called before the embedding with the page's pixel_values ([S, PatchDim], the
// processor's order); it returns the pixels to embed (pixels itself, or a copy: never
// written in place).
type PixelsHook interface {
	Pixels(pixels []float32) []float32
}

// ProjSite is a block's attn where the heads enter proj: [Rows, Hidden] on the backend, head
// h in columns [h*HeadDim, (h+1)*HeadDim), rows as the graph holds them.
type ProjSite struct {
	Block, Rows     int
	Hidden, HeadDim int
	Attn            backend.View
	Backend         backend.Backend
}

// ProjHook edits attn before proj reads it (the tap attn is what proj reads).
type ProjHook interface{ BeforeProj(s ProjSite) }

// BlockSite is the tower right after a block: its output and what may change what follows.
type BlockSite interface {
	Block() int
	// Output is the block's output on the page, [S, D] in the blocks' row order (read only).
	Output() []float32
	// SetRows makes the block's output take src's rows (src [S, D]) at rows (the blocks'
	// order): the kept output, the statistics, the deepstack merger and the next block see it.
	SetRows(rows []int, src []float32)
	// Received is the attention each page row received in the block (probe.Store.Received).
	Received(ctx context.Context) ([]float64, error)
	// RunRows makes the later blocks and the mergers run the page rows listed only
	// (increasing, whole merge units), compacted (geom.Views.Drop).
	RunRows(rows []int) error
}

// OutputHook edits a block's output before anything reads it.
type OutputHook interface{ AfterBlock(s BlockSite) }

// RowsHook runs after a block and its deepstack merger, before the next block.
type RowsHook interface {
	BeforeNext(ctx context.Context, s BlockSite) error
}

// HostMemory is an intervention whose hooks hold host memory besides the run's (read by the
// memory estimate before the run starts): how many float32s for a page of patches rows of
// hidden values each.
type HostMemory interface {
	HostFloats(patches, hidden int) int64
}

// QKHook asks the run to take block's q|k even when the settings keep none (BlockSite.Received
// reads it).
type QKHook interface{ NeedsQK(block int) bool }
