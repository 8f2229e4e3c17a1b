package tower

// resume.go: a run that goes on from another run's state instead of running the blocks
// before its first intervention again (Session.Sweep: one ablated run per head, each from its
// ablated block).
//
// Invariant: only blocks that no setting of the run can change are taken (a run with a patch
// of its own, or a token drop before the block, is refused), and they are taken whole: the
// kept taps, the mean changes, the deepstack features and the hidden state after the last of
// them, so the run from there is the run from block 0 bit for bit. Mutation that would
// silently break it: taking the base's output of block instead of block-1 — each row would
// measure its ablation on a state that already went through its block unablated
// (TestSweepRowsAgainstBase compares every row with its ablation run alone).

import "fmt"

// Resume makes r, fresh from Start, go on from base's state after block-1: the blocks before
// block, which an intervention from block on cannot change, are base's bit for bit, so their
// kept taps, mean changes and deepstack features are taken from base (shared, read only)
// instead of run again. They keep no timings (they did not run here). Only for runs whose
// interventions all start at block or later (Sweep's single ablations): anything earlier
// would be skipped.
func (r *Run) Resume(base *Run, block int) error {
	c := r.Config()
	switch {
	case block <= 0:
		return nil
	case r.next != 0 || block > base.next || block > c.Depth || base.Layout.Rows() != r.Layout.Rows():
		return fmt.Errorf("resume at block %d: the run is at block %d, its base at %d", block, r.next, base.next)
	case r.patched:
		return fmt.Errorf("resume at block %d: the run has patches of its own", block)
	case !r.e.Settings.KeepTop.None() && r.e.Settings.KeepTop.After < block:
		return fmt.Errorf("resume at block %d: the run drops tokens after block %d", block, r.e.Settings.KeepTop.After)
	}
	var names []string
	for _, t := range r.e.Settings.Keep.Taps.List() {
		names = append(names, t.String())
	}
	if err := r.Probes.ShareFirst(base.Probes, block, names); err != nil {
		return fmt.Errorf("resume at block %d: %w", block, err)
	}
	prev, err := base.Probes.Output(block - 1)
	if err != nil {
		return fmt.Errorf("resume at block %d: %w", block, err)
	}
	r.prev, r.prevOwn = prev, false // the base run's kept output
	r.e.Backend.Upload(v(r.g.buf.h), prev)
	r.changes = append(r.changes[:0], base.changes[:block]...)
	for k, d := range c.Deepstack {
		if d < block {
			r.Deepstack = append(r.Deepstack, base.Deepstack[k])
		}
	}
	r.next = block
	return nil
}
