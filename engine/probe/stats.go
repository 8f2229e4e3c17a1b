package probe

// stats.go: activation statistics — per patch (norm, mean, max |x|, relative change),
// histograms, summaries, the strongest channels — and the difference of two tensors.
//
// Invariant: every statistic is computed in float64 over the values in index order, and a
// NaN or Inf among the inputs shows in the result (never silently skipped, but by Histogram,
// which says it counts only finite values). Mutation that would silently break it: the
// relative change dividing by ||out|| instead of ||in|| — still a number in [0, 2], the
// wrong one.

import (
	"fmt"
	"math"
	"slices"
)

// PatchStats are per-patch statistics of a block's output (or of any tap: then without
// Change), and their mean change.
type PatchStats struct {
	Norm, Mean, MaxAbs []float32 // of the row
	Change             []float32 // ||out-in|| / ||in||; nil for RowStats
	MeanChange         float64   // the mean of Change over the patches
}

// NewPatchStats computes the statistics of out ([S, d]) against the block's input in.
func NewPatchStats(in, out []float32, d int) PatchStats {
	st := RowStats(out, d)
	n := len(st.Norm)
	st.Change = make([]float32, n)
	for p := 0; p < n; p++ {
		var diff, inSS float64
		for j, x := range out[p*d : (p+1)*d] {
			xf, xin := float64(x), float64(in[p*d+j])
			diff += (xf - xin) * (xf - xin)
			inSS += xin * xin
		}
		st.Change[p] = float32(math.Sqrt(diff) / math.Max(math.Sqrt(inSS), 1e-30))
		st.MeanChange += float64(st.Change[p])
	}
	st.MeanChange /= float64(max(n, 1))
	return st
}

// RowStats are the L2 norm, mean and max |x| of each row of x ([rows, width]: any tap of a
// block, per patch). Change is nil: it is defined for a block output against its input.
func RowStats(x []float32, width int) PatchStats {
	n := 0
	if width > 0 {
		n = len(x) / width
	}
	st := PatchStats{Norm: make([]float32, n), Mean: make([]float32, n), MaxAbs: make([]float32, n)}
	for p := 0; p < n; p++ {
		var ss, sum, mx float64
		for _, v := range x[p*width : (p+1)*width] {
			xf := float64(v)
			ss += xf * xf
			sum += xf
			mx = math.Max(mx, math.Abs(xf))
		}
		st.Norm[p], st.Mean[p], st.MaxAbs[p] = float32(math.Sqrt(ss)), float32(sum/float64(width)), float32(mx)
	}
	return st
}

// ChannelMap is channel ch of block's output for every patch: [S] in sequence order (place
// it on the image with Layout.Pos). It needs KeepOutputs.
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
