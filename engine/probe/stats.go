package probe

// stats.go: activation statistics — per patch (norm, mean, max |x|, relative change),
// histograms, summaries, the strongest channels — and the difference of two tensors.
//
// Invariant: every statistic is computed in float64 over the values in index order (the block
// statistics on AVX-512 in 8 lanes then a fixed order instead: kernel.RowSumsF64, the float64
// sums' last bits apart, within one float32 ulp of the index order's results but where a mean
// cancels, TestPatchStatsMatchTheSerialLoop), and a
// NaN or Inf among the inputs shows in the result (never silently skipped, but by Histogram,
// which says it counts only finite values). Mutation that would silently break it: the
// relative change dividing by ||out|| instead of ||in|| — still a number in [0, 2], the
// wrong one.

import (
	"fmt"
	"math"
	"slices"

	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// PatchStats are per-patch statistics of a block's output (or of any tap: then without
// Change), and their mean change.
type PatchStats struct {
	Norm, Mean, MaxAbs []float32 // of the row
	Change             []float32 // ||out-in|| / ||in||; nil for RowStats
	MeanChange         float64   // the mean of Change over the patches
	// Finite says every value of the rows is a number (no NaN, no ±Inf); InFinite the same
	// of the block's input (NewPatchStats only). They come free with the sums of squares: in
	// float64 a sum of squared float32 values is finite exactly when every value is (the
	// largest float32 squared is ~1.2e77, far from float64's overflow).
	Finite, InFinite bool
}

// statRowsPerTask is the fewest rows a goroutine of the statistics takes: enough to pay for
// starting it, few enough to spread 1,024 rows over 16 threads.
const statRowsPerTask = 32

// NewPatchStats computes the statistics of out ([S, d]) against the block's input in, one
// pass over both, rows spread over threads goroutines (0: every core). Each row is summed in
// index order on one goroutine, so the numbers do not depend on the number of threads.
func NewPatchStats(in, out []float32, d, threads int) PatchStats {
	st := newRowStats(len(out), d, true)
	outOK, inOK := make([]bool, len(st.Norm)), make([]bool, len(st.Norm)) // per row: one writer each
	par.RangesOn(len(st.Norm), statRowsPerTask, threads, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			outOK[p], inOK[p] = st.row(p, out[p*d:(p+1)*d], in[p*d:(p+1)*d])
		}
	})
	st.Finite, st.InFinite = allTrue(outOK), allTrue(inOK)
	for _, c := range st.Change { // in patch order: the same sum on any number of threads
		st.MeanChange += float64(c)
	}
	st.MeanChange /= float64(max(len(st.Norm), 1))
	return st
}

// RowStats are the L2 norm, mean and max |x| of each row of x ([rows, width]: any tap of a
// block, per patch). Change is nil: it is defined for a block output against its input.
func RowStats(x []float32, width int) PatchStats {
	st := newRowStats(len(x), width, false)
	ok := make([]bool, len(st.Norm))
	par.Ranges(len(st.Norm), statRowsPerTask, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			ok[p], _ = st.row(p, x[p*width:(p+1)*width], nil)
		}
	})
	st.Finite = allTrue(ok)
	return st
}

func newRowStats(n, width int, change bool) PatchStats {
	rows := 0
	if width > 0 {
		rows = n / width
	}
	st := PatchStats{Norm: make([]float32, rows), Mean: make([]float32, rows), MaxAbs: make([]float32, rows)}
	if change {
		st.Change = make([]float32, rows)
	}
	return st
}

// row fills row p's statistics from its values x (and in, the block's input, for Change:
// nil for RowStats) and says whether x and in are finite. math.Max's answers are kept for the
// values it treats specially: +Inf anywhere gives +Inf, else a NaN anywhere gives NaN (ss is
// NaN then).
func (st *PatchStats) row(p int, x, in []float32) (finite, inFinite bool) {
	ss, sum, mx, diff, inSS := rowSums(x, in)
	if in != nil {
		st.Change[p] = float32(math.Sqrt(diff) / math.Max(math.Sqrt(inSS), 1e-30))
	}
	if math.IsNaN(ss) && !math.IsInf(mx, 1) {
		mx = math.NaN()
	}
	st.Norm[p], st.Mean[p], st.MaxAbs[p] = float32(math.Sqrt(ss)), float32(sum/float64(len(x))), float32(mx)
	return !math.IsNaN(ss) && !math.IsInf(ss, 0), !math.IsNaN(inSS) && !math.IsInf(inSS, 0)
}

// rowSums is one pass over a row in float64: sum x^2, sum x, max |x| (a compare, not math.Max:
// a call per value was the slowest part of the old loop) and, with in, sum (x-in)^2 and sum
// in^2. In index order, but for a block's row on AVX-512: kernel.RowSumsF64's 8 lanes.
func rowSums(x, in []float32) (ss, sum, mx, diff, inSS float64) {
	switch {
	case in != nil && kernel.UseAVX512 && len(x) > 0:
		var s [5]float64
		kernel.RowSumsF64(&x[0], &in[0], len(x), &s)
		return s[0], s[1], s[4], s[2], s[3]
	case in == nil:
		for _, v := range x {
			xf := float64(v)
			ss += xf * xf
			sum += xf
			if a := math.Abs(xf); a > mx {
				mx = a
			}
		}
	default:
		for j, v := range x {
			xf, xin := float64(v), float64(in[j])
			ss += xf * xf
			sum += xf
			if a := math.Abs(xf); a > mx {
				mx = a
			}
			diff += (xf - xin) * (xf - xin)
			inSS += xin * xin
		}
	}
	return ss, sum, mx, diff, inSS
}

func allTrue(flags []bool) bool { return !slices.Contains(flags, false) }

// ChannelMap is channel ch of block's output for every patch: [S] in sequence order (place
// it on the image with Layout.Pos). It needs the tap out kept (Settings.Keep).
func (s *Store) ChannelMap(block, ch int) ([]float32, error) {
	return s.TapChannelMap(TapOut, block, ch)
}

// TapChannelMap is channel ch of block's value of the tap name for every patch: [S] in
// sequence order. The tap must be kept.
func (s *Store) TapChannelMap(name string, block, ch int) ([]float32, error) {
	x, err := s.Tap(name, block)
	if err != nil {
		return nil, err
	}
	rows := max(s.Layout.Rows(), 1)
	W := len(x) / rows
	if ch < 0 || ch >= W {
		return nil, fmt.Errorf("channel %d outside %d", ch, W)
	}
	m := make([]float32, rows)
	for p := range m {
		m[p] = x[p*W+ch]
	}
	return m, nil
}

// Histogram counts values into bins equal bins over [lo, hi], the range of the finite values.
// Bin b holds lo + b*w <= x < lo + (b+1)*w, with w = (hi-lo)/bins, and the last bin also
// holds hi. NaN and ±Inf are not counted. When all finite values are equal, bin 0 holds
// them; when there are none, counts are all zero and lo = hi = 0. bins < 1 gives nil.
func Histogram(values []float32, bins int) (counts []int, lo, hi float32) {
	if bins < 1 {
		return nil, 0, 0
	}
	counts = make([]int, bins)
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range values {
		if finite(x) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if lo > hi {
		return counts, 0, 0
	}
	width := float64(hi) - float64(lo)
	for _, x := range values {
		if !finite(x) {
			continue
		}
		b := 0
		if width > 0 {
			b = min(int((float64(x)-float64(lo))/width*float64(bins)), bins-1)
		}
		counts[b]++
	}
	return counts, lo, hi
}

func finite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// Summary is the mean, population standard deviation, minimum and maximum of values, in
// float64; a NaN or Inf among them shows in the results. All zero for no values.
func Summary(values []float32) (mean, std, lo, hi float64) {
	if len(values) == 0 {
		return 0, 0, 0, 0
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range values {
		f := float64(x)
		mean += f
		lo, hi = min(lo, f), max(hi, f)
	}
	mean /= float64(len(values))
	for _, x := range values {
		d := float64(x) - mean
		std += d * d
	}
	return mean, math.Sqrt(std / float64(len(values))), lo, hi
}

// ChannelScore is one channel and its mean |x| over the patches.
type ChannelScore struct {
	Channel int
	MeanAbs float64
}

// TopChannelsOf is the strongest channels of a [rows, width] activation (a block output,
// say): the k channels with the largest mean |x| over rows, largest first, ties
// broken by the lower channel; all of them when k >= width.
func TopChannelsOf(values []float32, width, k int) []ChannelScore {
	if width <= 0 {
		return nil
	}
	rows := len(values) / width
	sums := make([]float64, width)
	for p := range rows {
		for c, x := range values[p*width : (p+1)*width] {
			sums[c] += math.Abs(float64(x))
		}
	}
	scores := make([]ChannelScore, width)
	for c, s := range sums {
		scores[c] = ChannelScore{c, s / float64(max(rows, 1))}
	}
	slices.SortFunc(scores, func(a, b ChannelScore) int {
		switch {
		case a.MeanAbs > b.MeanAbs:
			return -1
		case a.MeanAbs < b.MeanAbs:
			return 1
		}
		return a.Channel - b.Channel
	})
	return scores[:max(0, min(k, width))]
}

// MaxAbsDiff is max_i |a_i - b_i| in float64. Equal values (NaN against NaN and an infinity
// against itself included) differ by 0; a NaN against a number, or slices of different
// lengths, give +Inf.
func MaxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var m float64
	for i, x := range a {
		y := b[i]
		if x == y || (x != x && y != y) {
			continue
		}
		d := math.Abs(float64(x) - float64(y))
		if d != d {
			return math.Inf(1)
		}
		m = max(m, d)
	}
	return m
}

// CompareOutputs is MaxAbsDiff of every block output of a against b's (two runs of one page
// under two settings). It is an error when the runs kept a different number of blocks or
// blocks of different sizes.
func CompareOutputs(a, b [][]float32) ([]float64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("compare: %d and %d block outputs kept", len(a), len(b))
	}
	per := make([]float64, len(a))
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return nil, fmt.Errorf("compare: block %d outputs of %d and %d values", i, len(a[i]), len(b[i]))
		}
		per[i] = MaxAbsDiff(a[i], b[i])
	}
	return per, nil
}

// PatchDiff is, for every row of two [rows, width] tensors, max over the row of |a - b|:
// where two runs of one page differ, patch by patch. Equal values (NaN against NaN
// included) differ by 0; a NaN against a number is +Inf.
func PatchDiff(a, b []float32, width int) []float32 {
	rows := min(len(a), len(b)) / max(width, 1)
	out := make([]float32, rows)
	for r := range rows {
		out[r] = float32(MaxAbsDiff(a[r*width:(r+1)*width], b[r*width:(r+1)*width]))
	}
	return out
}
