package engine

// compare.go: two settings on one page, measured as a benchmark measures. Each side runs one
// warm-up pass (first touch of the weights' pages, the pack cache, the allocator: up to 16x
// the page faults of a later pass), then the sides alternate ABBA... for the repetitions, so
// a drift of the machine's speed falls on both alike. A side's time is the median of its
// passes (each the sum of the engine's own block times and the merger, pauses excluded), its
// spread the passes' range; the ratio B/A is the geometric mean of the paired passes' ratios
// with its 95% interval (Student's t over the log ratios), and the verdict says "within
// noise" when that interval holds 1. Settings that cannot change the work (identical ones)
// are within noise by definition: their interval is the machine's noise, shown as such.
// Outputs are compared once, on the warm-up passes (the engine is deterministic per setting).
// CompareRuns compares the outputs alone of two runs already finished (no timing).
//
// Invariant: every pass of a side runs the same blocks from block 0 on a fresh run, and the
// passes of A and B alternate so that neither side always runs first. Mutation that would
// silently break it: timing one pass of A then one of B (as Compare once did) — with first
// touch on A's side and drift, identical settings read 20-30% apart, B "faster" in 6 of 6.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/turbospark/inspector/engine/probe"
)

// DefaultCompareReps is how many timed passes each side gets by default.
const DefaultCompareReps = 3

// MaxCompareReps bounds the repetitions a Compare may ask for.
const MaxCompareReps = 100

// CompareOptions say how much to measure.
type CompareOptions struct {
	Reps int // timed passes per side after the warm-up (0: DefaultCompareReps)
	// MaxReps > Reps: go on, a pair of passes at a time, until the ratio's interval is within
	// ±Tight of the ratio or MaxReps passes were run.
	MaxReps int
	Tight   float64 // relative half-width that counts as tight (0: 2%)
	Blocks  int     // blocks 0..Blocks-1 only, without the merger (0: every block and the merger)
}

func (o CompareOptions) normalized() CompareOptions {
	if o.Reps <= 0 {
		o.Reps = DefaultCompareReps
	}
	o.Reps = min(o.Reps, MaxCompareReps)
	o.MaxReps = min(max(o.MaxReps, o.Reps), MaxCompareReps)
	if o.Tight <= 0 {
		o.Tight = 0.02
	}
	return o
}

// CompareStep is where a Compare stands, for progress: pass Rep of Reps (-1: the warm-up)
// of side Side (0: A, 1: B), Blocks of Of done.
type CompareStep struct {
	Rep, Reps, Side, Blocks, Of int
}

// PassTimes is one pass of one side.
type PassTimes struct {
	Rep        int       `json:"rep"`     // 0.. (timed passes only)
	Order      int       `json:"order"`   // its place in the interleaved sequence of both sides' passes
	BlockS     []float64 `json:"block_s"` // each block's wall: the parts below and host work
	WaitS      []float64 `json:"wait_s"`  // waiting for weights (pread)
	AttentionS []float64 `json:"attention_s"`
	MLPS       []float64 `json:"mlp_s"`
	DeepstackS []float64 `json:"deepstack_s"`
	MergerS    float64   `json:"merger_s,omitempty"`
	TotalS     float64   `json:"total_s"` // blocks and merger
}

// SideTimes is one side: its settings, every timed pass and their summary.
type SideTimes struct {
	Settings Settings    `json:"settings"`
	Passes   []PassTimes `json:"passes"`
	MedianS  float64     `json:"median_s"`
	MinS     float64     `json:"min_s"`
	MaxS     float64     `json:"max_s"`
	// Per block, the median over the passes of each part (and of the wall).
	BlockMedianS     []float64 `json:"block_median_s"`
	WaitMedianS      []float64 `json:"wait_median_s"`
	AttentionMedianS []float64 `json:"attention_median_s"`
	MLPMedianS       []float64 `json:"mlp_median_s"`
	DeepstackMedianS []float64 `json:"deepstack_median_s"`
	MergerMedianS    float64   `json:"merger_median_s,omitempty"`
}

// Verdicts.
const (
	WithinNoise = "within noise"
	AFaster     = "A faster"
	BFaster     = "B faster"
)

// Comparison is what a Compare measured.
type Comparison struct {
	A, B      SideTimes
	Reps      int     `json:"reps"`
	Blocks    int     `json:"blocks"` // blocks timed (from block 0)
	Merger    bool    `json:"merger"` // the merger was timed (every block ran)
	Ratio     float64 `json:"ratio"`  // B's time over A's (geometric mean of the paired passes)
	RatioLow  float64 `json:"ratio_low"`
	RatioHigh float64 `json:"ratio_high"` // +Inf, written null, with one pair: IntervalNote says so
	// IntervalNote says why the interval is unbounded ("" when it is not).
	IntervalNote string `json:"interval_note,omitempty"`
	Verdict      string `json:"verdict"`
	Identical    bool   `json:"identical_settings,omitempty"` // the work is the same: any difference is noise
	// Output differences (warm-up passes): per block and the largest of all.
	MaxOutputDiff  float64   `json:"max_output_diff"`
	BlockDiff      []float64 `json:"block_diff"`
	MergerDiff     float64   `json:"merger_diff,omitempty"`
	DeepstackDiffs []float64 `json:"deepstack_diff,omitempty"`
	// NonFiniteA and NonFiniteB are where a side's values stopped being finite (nil: they did
	// not): its outputs then cannot be compared, whatever the differences above say.
	NonFiniteA *NonFinite  `json:"non_finite_a,omitempty"`
	NonFiniteB *NonFinite  `json:"non_finite_b,omitempty"`
	PatchDiffs [][]float32 `json:"-"` // per block, per patch: max over channels of |A-B|
}

// Summary is one line: each side's median and range, the ratio, its interval and the verdict.
func (c *Comparison) Summary() string {
	// (The verdict of one pair is "within noise": its interval holds 1.)
	v := c.Verdict
	if c.Identical {
		v = "no difference (identical settings: the interval is this machine's noise)"
	} else if v == WithinNoise {
		v = "no difference (within noise)"
	}
	interval := fmt.Sprintf("95%% interval %.3f-%.3f over %d pairs", c.RatioLow, c.RatioHigh, c.Reps)
	if c.IntervalNote != "" {
		interval = c.IntervalNote
	}
	return fmt.Sprintf("A %.1f ms (%.1f-%.1f), B %.1f ms (%.1f-%.1f); B/A %.3f, %s: %s",
		1e3*c.A.MedianS, 1e3*c.A.MinS, 1e3*c.A.MaxS, 1e3*c.B.MedianS, 1e3*c.B.MinS, 1e3*c.B.MaxS,
		c.Ratio, interval, v)
}

// sameWork says whether two settings run the very same work: everything that changes what
// or how the engine computes is equal (what is kept differs on purpose in a Compare).
func sameWork(a, b Settings) bool {
	a.Keep, b.Keep = Keep{}, Keep{}
	a.MaxMemory, b.MaxMemory = 0, 0
	a, b = a.Normalized(), b.Normalized()
	return a == b
}

// CompareSessions measures a against b (two sessions of one page, outputs kept): a warm-up
// pass each, whose outputs are compared, then opt's repetitions interleaved. progress (may
// be nil) hears each block as it finishes.
func CompareSessions(ctx context.Context, a, b *Session, opt CompareOptions, progress func(CompareStep)) (*Comparison, error) {
	opt = opt.normalized()
	depth := a.Checkpoint.Config.Depth
	if b.Checkpoint.Config.Depth != depth || a.Input.Patches() != b.Input.Patches() {
		return nil, errors.New("compare: the two sides must run the same checkpoint and page")
	}
	n := depth
	if opt.Blocks > 0 {
		n = min(opt.Blocks, depth)
	}
	c := &Comparison{A: SideTimes{Settings: a.Settings}, B: SideTimes{Settings: b.Settings}, Blocks: n, Merger: n == depth,
		Identical: sameWork(a.Settings, b.Settings)}
	sides := [2]*Session{a, b}
	order := 0
	pass := func(k, rep, reps int) (PassTimes, error) {
		p, err := timePass(ctx, sides[k], n, c.Merger, func(done int) {
			if progress != nil {
				progress(CompareStep{Rep: rep, Reps: reps, Side: k, Blocks: done, Of: n})
			}
		})
		p.Rep, p.Order = rep, order
		order++
		return p, err
	}
	for k := range sides { // warm-up: first touch; its outputs are the ones compared
		if _, err := pass(k, -1, opt.Reps); err != nil {
			return nil, err
		}
	}
	if err := c.diff(a.Run, b.Run, n); err != nil {
		return nil, err
	}
	for rep := 0; rep < opt.MaxReps; rep++ {
		if rep >= opt.Reps && c.tight(opt.Tight) {
			break
		}
		reps := opt.Reps
		if rep >= opt.Reps {
			reps = opt.MaxReps
		}
		first := rep % 2 // ABBA: A first in even repetitions, B in odd ones
		for _, k := range []int{first, 1 - first} {
			p, err := pass(k, rep, reps)
			if err != nil {
				return nil, err
			}
			if k == 0 {
				c.A.Passes = append(c.A.Passes, p)
			} else {
				c.B.Passes = append(c.B.Passes, p)
			}
		}
		c.summarize()
	}
	return c, nil
}

// tight says whether the ratio's interval is within ±rel of it.
func (c *Comparison) tight(rel float64) bool {
	return c.Reps >= 2 && c.RatioHigh/c.Ratio-1 <= rel && 1-c.RatioLow/c.Ratio <= rel
}

// timePass runs blocks 0..n-1 (and the merger) of a fresh run of s.
func timePass(ctx context.Context, s *Session, n int, merger bool, done func(int)) (PassTimes, error) {
	var p PassTimes
	if err := s.Restart(); err != nil {
		return p, err
	}
	for i := 0; i < n; i++ {
		if err := s.Step(ctx); err != nil {
			return p, err
		}
		t := s.Run.Timings[i]
		p.BlockS = append(p.BlockS, t.Wall.Seconds())
		p.WaitS = append(p.WaitS, t.Wait.Seconds())
		p.AttentionS = append(p.AttentionS, t.Attention.Seconds())
		p.MLPS = append(p.MLPS, t.MLP.Seconds())
		p.DeepstackS = append(p.DeepstackS, t.Deepstack.Seconds())
		p.TotalS += t.Wall.Seconds()
		done(i + 1)
	}
	if merger {
		if err := s.Step(ctx); err != nil {
			return p, err
		}
		p.MergerS = s.Run.MergerTime.Seconds()
		p.TotalS += p.MergerS
	}
	return p, nil
}

// diff compares the warm-up passes' outputs of the blocks run (and the merger when it ran).
func (c *Comparison) diff(a, b *Run, n int) error {
	oa, ob := a.Probes.Outputs(), b.Probes.Outputs()
	if len(oa) < n || len(ob) < n {
		return fmt.Errorf("compare: %d and %d block outputs kept of %d (the probe memory budget turned them off: lower max pixels)", len(oa), len(ob), n)
	}
	c.NonFiniteA, c.NonFiniteB = a.NonFinite, b.NonFinite
	var err error
	if c.BlockDiff, err = probe.CompareOutputs(oa[:n], ob[:n]); err != nil {
		return err
	}
	D := a.Config().Hidden
	for i := range n {
		c.PatchDiffs = append(c.PatchDiffs, probe.PatchDiff(oa[i], ob[i], D))
	}
	c.MaxOutputDiff = slices.Max(append([]float64{0}, c.BlockDiff...))
	if c.Merger {
		c.MergerDiff = probe.MaxAbsDiff(a.Merger, b.Merger)
		for k := range a.Deepstack {
			c.DeepstackDiffs = append(c.DeepstackDiffs, probe.MaxAbsDiff(a.Deepstack[k], b.Deepstack[k]))
		}
		c.MaxOutputDiff = max(c.MaxOutputDiff, c.MergerDiff, slices.Max(append([]float64{0}, c.DeepstackDiffs...)))
	}
	return nil
}

// summarize computes each side's summary and the ratio from the passes so far.
func (c *Comparison) summarize() {
	c.A.summarize()
	c.B.summarize()
	c.Reps = min(len(c.A.Passes), len(c.B.Passes))
	logs := make([]float64, c.Reps)
	for i := range logs {
		logs[i] = math.Log(c.B.Passes[i].TotalS / c.A.Passes[i].TotalS)
	}
	c.Ratio, c.RatioLow, c.RatioHigh = ratioInterval(logs)
	c.IntervalNote = ""
	if c.Reps < 2 {
		c.IntervalNote = "one pair of passes gives no interval: run 2 or more"
	}
	switch {
	case c.Identical || (c.RatioLow <= 1 && 1 <= c.RatioHigh):
		c.Verdict = WithinNoise
	case c.RatioHigh < 1:
		c.Verdict = BFaster
	default:
		c.Verdict = AFaster
	}
}

// ratioInterval is exp of the mean of the paired log ratios and of its 95% interval
// (Student's t); with one pair the interval is unbounded.
func ratioInterval(logs []float64) (ratio, low, high float64) {
	n := len(logs)
	if n == 0 {
		return math.NaN(), 0, math.Inf(1)
	}
	var mean float64
	for _, x := range logs {
		mean += x
	}
	mean /= float64(n)
	if n == 1 {
		return math.Exp(mean), 0, math.Inf(1)
	}
	var ss float64
	for _, x := range logs {
		ss += (x - mean) * (x - mean)
	}
	half := tQuantile975(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return math.Exp(mean), math.Exp(mean - half), math.Exp(mean + half)
}

// tQuantile975 is Student's t distribution's 97.5th percentile at df degrees of freedom.
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df <= len(table) {
		return table[df-1]
	}
	return 1.960 + 2.4/float64(df) // within 0.001 of the table past 30
}

// summarize a side's passes: the median and range of the totals, the medians per block.
func (s *SideTimes) summarize() {
	var totals []float64
	for _, p := range s.Passes {
		totals = append(totals, p.TotalS)
	}
	if len(totals) == 0 {
		return
	}
	s.MedianS, s.MinS, s.MaxS = medianOf(totals), slices.Min(totals), slices.Max(totals)
	perBlock := func(part func(PassTimes) []float64) []float64 {
		out := make([]float64, len(part(s.Passes[0])))
		for i := range out {
			var v []float64
			for _, p := range s.Passes {
				if ps := part(p); i < len(ps) {
					v = append(v, ps[i])
				}
			}
			out[i] = medianOf(v)
		}
		return out
	}
	s.BlockMedianS = perBlock(func(p PassTimes) []float64 { return p.BlockS })
	s.WaitMedianS = perBlock(func(p PassTimes) []float64 { return p.WaitS })
	s.AttentionMedianS = perBlock(func(p PassTimes) []float64 { return p.AttentionS })
	s.MLPMedianS = perBlock(func(p PassTimes) []float64 { return p.MLPS })
	s.DeepstackMedianS = perBlock(func(p PassTimes) []float64 { return p.DeepstackS })
	var merger []float64
	for _, p := range s.Passes {
		merger = append(merger, p.MergerS)
	}
	s.MergerMedianS = medianOf(merger)
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// CompareRuns compares two finished runs of the same page shape (say two tile sizes or two
// residency modes): the MaxAbsDiff of every block's output and of the merger output. Both
// runs need the tap out kept (Settings.Keep). It is an error when the runs differ in blocks kept, sequence length,
// width or merger shape, or when either has not finished.
func CompareRuns(a, b *Run) (perBlock []float64, merger float64, err error) {
	if !a.Finished() || !b.Finished() {
		return nil, 0, fmt.Errorf("compare: both runs must have finished (%v, %v)", a.Finished(), b.Finished())
	}
	ca, cb := a.Config(), b.Config()
	if sa, sb := a.Layout.Rows(), b.Layout.Rows(); sa != sb || ca.Hidden != cb.Hidden {
		return nil, 0, fmt.Errorf("compare: shapes differ: %d x %d against %d x %d", sa, ca.Hidden, sb, cb.Hidden)
	}
	oa, ob := a.Probes.Outputs(), b.Probes.Outputs()
	if len(oa) != len(ob) || len(oa) != ca.Depth {
		return nil, 0, fmt.Errorf("compare: %d and %d block outputs kept of %d (run with outputs kept)", len(oa), len(ob), ca.Depth)
	}
	if len(a.Merger) != len(b.Merger) {
		return nil, 0, fmt.Errorf("compare: merger outputs of %d and %d values", len(a.Merger), len(b.Merger))
	}
	if perBlock, err = probe.CompareOutputs(oa, ob); err != nil {
		return nil, 0, err
	}
	return perBlock, probe.MaxAbsDiff(a.Merger, b.Merger), nil
}
