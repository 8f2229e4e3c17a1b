package engine

// session.go: one checkpoint, one page and one Settings, from open to close. The CLI's
// `run`, the window's run and each side of Compare are Sessions: they open, step, report
// and close the same way. A Session owns its engine (the backend and the resident weights)
// and its run. A session with a PatchFrom setting runs the source image to the patched block
// once (patchFrom) and puts the patch on every run (engine/tower/patch.go).
//
// Invariant: Close frees the run's backend buffers, then the backend (which releases what
// it wrapped of the weights' memory), then the weights; every failure on the way out of
// OpenSession closes what was made. Mutation that would silently break it: closing the
// engine before the run — the run's Frees would reach a closed backend (harmless on the
// CPU, a release of released Metal buffers on a Mac).

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/guard"
)

// Session is a page under one Settings.
type Session struct {
	Dir, Image  string
	Settings    Settings // as run: Keep may be narrower than asked (see Notes)
	Checkpoint  *Checkpoint
	Input       *Input
	Engine      *Engine
	Run         *Run
	Report      *Report // the current run's; its totals are filled when the merger ran
	BackendNote string  // why the backend is not the one asked for ("" when it is)
	Notes       []string
	// Memory is what the session's runs hold, estimated before it opened (engine/tower/estimate.go): what
	// the next session of this process is refused against while this one is open.
	Memory MemoryEstimate
	// Observers see every block of every run of the session, from when they are added.
	Observers []func(BlockResult)

	progress atomic.Int64  // blocks of the current run (for what it has yet to keep)
	patch    *sessionPatch // the activation patch every run takes (Settings.PatchFrom)
}

// OpenSession opens dir's checkpoint, loads image under s (s.MaxPixels, when set, bounds
// the page instead of the processor's max_pixels), and starts a run at block 0 on be. It
// owns be from the call on: on failure be is closed. ctx stops what opening runs (an
// activation patch's source image runs to its block: Settings.PatchFrom).
func OpenSession(ctx context.Context, dir, image string, s Settings, be backend.Backend) (*Session, error) {
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		be.Close()
		return nil, err
	}
	if s.MaxPixels > 0 {
		ck.Pre.MaxPixels = s.MaxPixels
	}
	in, err := ck.LoadPage(image, s.MaxMemory)
	if err != nil {
		be.Close()
		return nil, err
	}
	return NewSession(ctx, ck, in, dir, image, s, be)
}

// NewSession starts in's page of ck under s on be (owned from the call on: on failure it is
// closed); dir and image name the page's sources in reports ("" where there are none). ctx
// stops what opening runs (OpenSession).
func NewSession(ctx context.Context, ck *Checkpoint, in *Input, dir, image string, s Settings, be backend.Backend) (*Session, error) {
	s = s.Normalized()
	limits := guard.Limits(s.MaxMemory) // with every other open session's holdings taken off
	keep, note := fitProbes(ck.Config, in.Patches(), s.Keep, probeRoom(ck, in, s, limits))
	s.Keep = keep
	est := EstimateMemory(ck, in, s)
	if err := guard.Check(est, limits, guard.RunTip); err != nil {
		be.Close()
		return nil, err
	}
	e, err := NewEngine(ck, be, s)
	if err != nil {
		return nil, err
	}
	sess, err := start(ctx, dir, image, e, in, note)
	if err != nil {
		return nil, err
	}
	sess.Memory = est
	guard.Register(sess, guard.Holding{Memory: est, Depth: ck.Config.Depth, Done: &sess.progress, MaxMemory: s.MaxMemory})
	return sess, nil
}

// probeRoom is what a run of in under s may keep for the probes: under each limit, half of
// what is left once the run itself (without probes) is counted — the other half is for the
// copy the dump (run --dump) and the window's export make of what they write — and at most
// half of the limit's room; the least of these (-1: no limit is known).
func probeRoom(ck *Checkpoint, in *Input, s Settings, limits []guard.Limit) int64 {
	if len(limits) == 0 {
		return -1
	}
	bare := s
	bare.Keep = bare.Keep.Only(0)
	est := EstimateMemory(ck, in, bare)
	room := int64(math.MaxInt64)
	for _, l := range limits {
		room = min(room, (l.Free-l.Need(est))/2, l.Free/2)
	}
	return max(room, 0) // 0: every probe goes (and guard.Check says why the run cannot go)
}

// Sibling is the same checkpoint and page under other settings, on be (owned from the
// call on): one side of a Compare. The page is kept, so MaxPixels must not change.
func (s *Session) Sibling(ctx context.Context, set Settings, be backend.Backend) (*Session, error) {
	if set.MaxPixels != s.Settings.MaxPixels {
		be.Close()
		return nil, fmt.Errorf("a sibling keeps the page: max pixels must stay %d (not %d)", s.Settings.MaxPixels, set.MaxPixels)
	}
	return NewSession(ctx, s.Checkpoint, s.Input, s.Dir, s.Image, set, be)
}

func start(ctx context.Context, dir, image string, e *Engine, in *Input, note string) (*Session, error) {
	s := &Session{Dir: dir, Image: image, Settings: e.Settings, Checkpoint: e.Checkpoint, Input: in, Engine: e}
	for _, n := range []string{e.Checkpoint.IgnoredNote(), in.Note, note} {
		if n != "" {
			s.Notes = append(s.Notes, n)
		}
	}
	if err := s.Restart(); err != nil {
		e.Close()
		return nil, err
	}
	if err := s.patchFrom(ctx, e.Settings.PatchFrom); err != nil {
		s.Run.Close()
		e.Close()
		return nil, err
	}
	return s, nil
}

// fitProbes turns off what a page of patches would keep beyond the budget — the taps asked
// for on request first (the widest first), then q|k (the attention probes), then the block
// outputs — and says so ("" when all fits). The budget is keep.Budget where it is set and
// room allows it, else room (probeRoom: what the memory limits leave them; -1 when none is
// known, then 8 GiB).
func fitProbes(cfg Config, patches int, keep Keep, room int64) (Keep, string) {
	budget := keep.Budget
	if room >= 0 && (budget <= 0 || budget > room) {
		budget = room
	}
	if budget <= 0 && room < 0 {
		budget = 8 << 30
	}
	asked := keep.Set()
	kept, off := asked, []string(nil)
	for _, group := range dropOrder(asked, cfg) {
		if ProbeBytes(cfg, patches, kept) <= budget {
			break
		}
		kept &^= group
		off = append(off, probeName(group))
	}
	if kept == asked {
		return keep, ""
	}
	return keep.Only(kept), fmt.Sprintf("%d patches would keep %s for the probes, over the %s budget: the %s probes are off (lower max pixels in Settings)",
		patches, FormatBytes(ProbeBytes(cfg, patches, asked)), FormatBytes(budget), strings.Join(off, ", "))
}

// dropOrder is the order fitProbes turns kept taps off in: the taps beyond ProbeTaps one by
// one, widest first (then the later in the graph first), then q and k together, then out.
func dropOrder(asked TapSet, cfg Config) []TapSet {
	var extra []Tap
	for _, t := range slices.Backward(asked.List()) {
		if !ProbeTaps.Has(t) {
			extra = append(extra, t)
		}
	}
	slices.SortStableFunc(extra, func(a, b Tap) int { return b.Width(cfg) - a.Width(cfg) })
	var order []TapSet
	for _, t := range extra {
		order = append(order, TapSetOf(t))
	}
	for _, g := range []TapSet{TapSetOf(TapQ, TapK), TapSetOf(TapOut)} {
		if asked&g != 0 {
			order = append(order, g)
		}
	}
	return order
}

// probeName names a group of taps turned off for the notes.
func probeName(g TapSet) string {
	switch g {
	case TapSetOf(TapQ, TapK):
		return "attention (q, k)"
	case TapSetOf(TapOut):
		return "activation (out)"
	}
	return "tap " + g.String()
}

// SetBackendNote records why the backend is not the one asked for (the report says so).
func (s *Session) SetBackendNote(note string) {
	s.BackendNote = note
	s.Report.Settings.BackendNote = note
}

// Restart starts a new run of the page at block 0 (the previous run is closed).
func (s *Session) Restart() error {
	run, err := s.Engine.Start(s.Input)
	if err != nil {
		return err
	}
	if p := s.patch; p != nil {
		if err := p.apply(run); err != nil {
			run.Close()
			return err
		}
	}
	if s.Run != nil {
		s.Run.Close()
	}
	s.Run = run
	s.progress.Store(0)
	run.Observers = append(run.Observers, func(r BlockResult) {
		s.progress.Store(int64(r.Timing.Block) + 1)
		for _, o := range s.Observers {
			o(r)
		}
	})
	s.Report = NewReport(s.Engine, s.Input, s.Dir, s.Image)
	s.Report.Settings.BackendNote = s.BackendNote
	s.Report.Notes = s.Notes
	return nil
}

// Step runs the next block, or the merger after the last (then the report's totals are
// filled). It is an error to step a finished run.
func (s *Session) Step(ctx context.Context) error {
	r := s.Run
	if r.Finished() {
		return fmt.Errorf("the run has finished: restart to run again")
	}
	if r.Next() < s.Checkpoint.Config.Depth {
		_, err := r.Step(ctx)
		return err
	}
	if _, err := r.Finish(ctx); err != nil {
		return err
	}
	s.Report.Finish(r)
	return nil
}

// RunAll steps until the merger has run.
func (s *Session) RunAll(ctx context.Context) error {
	for !s.Run.Finished() {
		if err := s.Step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close frees the run, then the engine (backend, then weights). A second Close does
// nothing.
func (s *Session) Close() error {
	if s.Engine == nil {
		return nil
	}
	defer guard.Unregister(s)
	if s.Run != nil {
		s.Run.Close()
		s.Run = nil
	}
	err := s.Engine.Close()
	s.Engine = nil
	return err
}

// sessionPatch is a session's activation patch: the source image's block output (head -1)
// or a head's attn slice at rows, applied to every run of the session (patchFrom computes it
// once).
type sessionPatch struct {
	block, head int
	rows        []int
	source      []float32
}

// apply puts the patch on run (fresh).
func (p *sessionPatch) apply(run *Run) error {
	if p.head >= 0 {
		return run.PatchHead(p.block, p.head, p.rows, p.source)
	}
	return run.PatchOutput(p.block, p.rows, p.source)
}

// patchFrom makes the session's patch from its PatchFrom setting: the image is made into a
// page as the session's was (the same processor settings), must give the same page, and runs
// to the block on the session's engine (with the session's ablation and mask); ctx stops
// that run between (and inside) its ops, as it stops any run.
func (s *Session) patchFrom(ctx context.Context, spec string) error {
	_, image, block, head, patches, err := ParsePatchFrom(spec)
	if err != nil || image == "" {
		return err
	}
	if c := s.Checkpoint.Config; block >= c.Depth || head >= c.Heads {
		return fmt.Errorf("patch-from block %d head %d: the tower has blocks 0..%d of heads 0..%d", block, head, c.Depth-1, c.Heads-1)
	}
	if err := ctx.Err(); err != nil { // stopped while this session's own page was made
		return err
	}
	src, err := s.Checkpoint.LoadPage(image, s.Settings.MaxMemory)
	if err != nil {
		return err
	}
	if a, b := src.Grids[0], s.Input.Grids[0]; len(src.Grids) != len(s.Input.Grids) || a != b {
		return fmt.Errorf("%s: its page is %v patches (t, h, w), this one's %v: patching needs the same page (an image of the same size, or the same max pixels)", image, a, b)
	}
	rows, err := patches.Rows(s.Run.Layout)
	if err != nil {
		return err
	}
	run, err := s.Engine.Start(src)
	if err != nil {
		return err
	}
	defer run.Close()
	var attn []float32
	if head >= 0 {
		run.CaptureAttn(block, func(a []float32) { attn = a })
	}
	for run.Next() <= block {
		if _, err := run.Step(ctx); err != nil {
			return fmt.Errorf("%s: %w", image, err)
		}
	}
	s.patch = &sessionPatch{block: block, head: head, rows: rows, source: run.Hidden()}
	if head >= 0 {
		s.patch.source = attn
	}
	return s.patch.apply(s.Run)
}
