package control

// headstats.go: the row service's block x head statistics of a run — each head's mean
// attention distance (patches) and entropy (nats) over up to HeadStatQueries sampled query
// patches — measured off the UI goroutine for the blocks that ran since the last measure,
// each block once per run. The Attention tab draws them as its chart, the head-statistics
// export writes them: both ask here.
//
// Invariant: the statistics are of one run (Store) and block i's row is block i's; a new run
// starts empty. The mutation that would silently break it: appending a measurement that
// lands after its run was replaced — the chart would show the old run's blocks as the new
// run's first ones.

import (
	"context"

	"github.com/turbospark/inspector/engine/probe"
)

// HeadStatQueries bounds the queries sampled per block for distance and entropy.
const HeadStatQueries = 256

// HeadStats are one run's statistics, for the blocks measured so far.
type HeadStats struct {
	Dist, Entropy [][]float64 // [block][head]: mean attention distance (patches), entropy (nats)
	Err           error       // the last measurement's error: not retried until the next run
	of            *probe.Store
	job           Latest // the statistics of the blocks not yet measured
}

// reset forgets the statistics and drops a measurement in flight; they are st's run's from
// now on.
func (h *HeadStats) reset(st *probe.Store) {
	h.of, h.Dist, h.Entropy, h.Err = st, nil, nil, nil
	h.job.Cancel()
}

// forRun starts over when st is another run's store.
func (h *HeadStats) forRun(st *probe.Store) {
	if h.of != st {
		h.reset(st)
	}
}

// HeadStats are the statistics of the blocks of st's run measured so far (a new run's start
// empty).
func (c *Rows) HeadStats(st *probe.Store) *HeadStats {
	c.stats.forRun(st)
	return &c.stats
}

// MeasuringHeads says whether statistics are being measured.
func (c *Rows) MeasuringHeads() bool { return c.stats.job.Busy() }

// MeasureHeads starts measuring the blocks of st's run from the first not measured to
// next-1, unless a measurement is in flight or failed, or every one is measured; it returns
// the blocks it started, [from, to) (from == to: none). landed runs on the UI goroutine when
// they are in, with the error that stopped them (then kept: HeadStats).
func (c *Rows) MeasureHeads(st *probe.Store, next int, landed func(error)) (from, to int) {
	h := &c.stats
	h.forRun(st)
	from = len(h.Dist)
	if h.job.Busy() || h.Err != nil || from >= next {
		return from, from
	}
	h.job.Start(c.host, func(ctx context.Context) (any, error) {
		return measureHeads(ctx, st, from, next)
	}, func(v any, err error) {
		if err != nil {
			h.Err = err
			landed(err)
			return
		}
		got := v.([2][][]float64)
		h.Dist, h.Entropy = append(h.Dist, got[0]...), append(h.Entropy, got[1]...)
		landed(nil)
	})
	return from, next
}

// measureHeads measures blocks [from, to) of st's run.
func measureHeads(ctx context.Context, st *probe.Store, from, to int) (any, error) {
	var dist, ent [][]float64
	for b := from; b < to; b++ {
		d, e, err := st.HeadStats(ctx, b, HeadStatQueries)
		if err != nil {
			return nil, err
		}
		dist, ent = append(dist, d), append(ent, e)
	}
	return [2][][]float64{dist, ent}, nil
}
