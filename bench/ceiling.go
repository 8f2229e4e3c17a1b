package bench

// ceiling.go: `inspector ceiling`: the machine's own compute ceiling for the CPU engine's
// kernels (engine/cpu's Ceiling: each unit on N threads at once, data in cache), GFLOP/s a
// thread, and the speed-up over the fewest threads that code running at that ceiling would
// get. It is the yardstick for a thread-scaling figure: make bench's pairs run it beside the
// tower, so our 2 -> 16 speed-up is read against the machine's in the same run.
//
// Invariant: the speed-up column is (threads x rate) over (fewest threads x their rate) of the
// same unit in this one call, so a machine whose cores slow down as more run shows it here.
// Mutation that would silently break it: dividing by the 1-thread rate measured once per
// process start instead, which mixes a quiet moment with a loaded one.

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/internal/jsonx"
)

// Ceiling is `inspector ceiling`: each unit's rate at every thread count of threads, for
// seconds each, printed as a table or (asJSON) as JSON.
func Ceiling(ctx context.Context, threads []int, seconds float64, asJSON bool, stdout io.Writer) error {
	var rates []cpu.UnitRate
	for i, n := range threads {
		rates = append(rates, cpu.Ceiling(ctx, n, time.Duration(seconds*float64(time.Second)))...)
		if ctx.Err() != nil {
			return fmt.Errorf("cancelled during thread count %d (%d of %d): no rates printed", n, i+1, len(threads))
		}
	}
	if len(rates) == 0 {
		return fmt.Errorf("no FMA or AMX kernel on this machine (%s): the CPU engine runs its generic code, which has no ceiling of its own", runtime.GOARCH)
	}
	if asJSON {
		return jsonx.Encode(stdout, rates, "")
	}
	printCeiling(stdout, rates)
	return nil
}

// printCeiling writes a row per unit and thread count: the rate a thread, all threads', and
// the speed-up over the unit's fewest threads in this call.
func printCeiling(w io.Writer, rates []cpu.UnitRate) {
	base := map[string]cpu.UnitRate{} // each unit's rate at its fewest threads
	var units []string                // in the order measured
	for _, r := range rates {
		b, seen := base[r.Unit]
		if !seen {
			units = append(units, r.Unit)
		}
		if !seen || r.Threads < b.Threads {
			base[r.Unit] = r
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "unit\tthreads\tGFLOP/s a thread\tGFLOP/s\tspeed-up\t")
	for _, u := range units {
		for _, r := range rates {
			if r.Unit == u {
				fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.2f\t\n", r.Unit, r.Threads, r.GFLOPsPerThread,
					r.GFLOPsPerThread*float64(r.Threads), ceilingSpeedUp(base[u], r))
			}
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "Each unit's kernel on every thread at once, data in cache, float32 flops; speed-up: all threads' rate over the fewest threads' (what an op at this ceiling would gain).")
}

// ceilingSpeedUp is what code at the ceiling gains from base's threads to r's.
func ceilingSpeedUp(base, r cpu.UnitRate) float64 {
	return r.GFLOPsPerThread * float64(r.Threads) / (base.GFLOPsPerThread * float64(base.Threads))
}
