package bench

// compare.go: `inspector compare`'s table: per block each side's median and range over the
// paired passes of engine.CompareSessions, B/A, the largest output difference, the totals and
// the Comparison's verdict.
//
// Invariant: the verdict printed is the Comparison's, from the paired passes; the table's
// medians are per block over the same passes. Mutation that would silently break it:
// printing one pass per side (the last one) as "the" times — noise would read as a result.

import (
	"fmt"
	"io"
	"strings"

	"github.com/turbospark/inspector/engine"
)

// PrintComparison prints the per-block medians and ranges, the totals and the verdict.
func PrintComparison(w io.Writer, c *engine.Comparison) {
	rng := func(s engine.SideTimes, i int) (lo, hi float64) {
		lo, hi = 1e300, 0
		for _, p := range s.Passes {
			lo, hi = min(lo, p.BlockS[i]), max(hi, p.BlockS[i])
		}
		return lo, hi
	}
	fmt.Fprintf(w, "%6s %22s %22s %7s %12s\n", "block", "A ms (min-max)", "B ms (min-max)", "B/A", "max |A-B|")
	for i := range c.Blocks {
		alo, ahi := rng(c.A, i)
		blo, bhi := rng(c.B, i)
		am, bm := c.A.BlockMedianS[i], c.B.BlockMedianS[i]
		fmt.Fprintf(w, "%6d %22s %22s %7.3f %12.3g\n", i, msRange(am, alo, ahi), msRange(bm, blo, bhi), bm/max(am, 1e-12), c.BlockDiff[i])
	}
	if c.Merger {
		fmt.Fprintf(w, "%6s %22.1f %22.1f %7.3f %12.3g\n", "merger", 1e3*c.A.MergerMedianS, 1e3*c.B.MergerMedianS,
			c.B.MergerMedianS/max(c.A.MergerMedianS, 1e-12), c.MergerDiff)
	}
	fmt.Fprintf(w, "%6s %22s %22s\n", "total", msRange(c.A.MedianS, c.A.MinS, c.A.MaxS), msRange(c.B.MedianS, c.B.MinS, c.B.MaxS))
	fmt.Fprintln(w, c.Summary())
	if c.NonFiniteA != nil || c.NonFiniteB != nil {
		fmt.Fprintf(w, "outputs: not compared: %s\n", NonFiniteSides(c))
	} else if c.MaxOutputDiff == 0 {
		fmt.Fprintf(w, "outputs: identical (%s compared)\n", comparedOutputs(c))
	} else {
		fmt.Fprintf(w, "outputs: differ by at most %.3g (max |A-B| over %s)\n", c.MaxOutputDiff, comparedOutputs(c))
	}
}

// NonFiniteSides says which sides' values stopped being finite, and where.
func NonFiniteSides(c *engine.Comparison) string {
	var parts []string
	for _, x := range []struct {
		side string
		nf   *engine.NonFinite
	}{{"A", c.NonFiniteA}, {"B", c.NonFiniteB}} {
		if x.nf != nil {
			parts = append(parts, "side "+x.side+"'s "+x.nf.String())
		}
	}
	return strings.Join(parts, "; ")
}

// comparedOutputs names what a Comparison compared.
func comparedOutputs(c *engine.Comparison) string {
	if c.Merger {
		return "every block output, the merger and the deepstack mergers"
	}
	return fmt.Sprintf("the outputs of blocks 0-%d", c.Blocks-1)
}

// msRange is "median (min-max)" in ms.
func msRange(med, lo, hi float64) string {
	return fmt.Sprintf("%.1f (%.1f-%.1f)", 1e3*med, 1e3*lo, 1e3*hi)
}
