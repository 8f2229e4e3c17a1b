package bench

// runtable.go: `inspector run`'s table: the header (model, backend, residency, tile, page,
// interventions, memory, notes), a row per block (weight wait, attention half, MLP half, wall,
// bytes read, mean change) and the totals.
//
// Invariant: a row's times are the block's own (BlockTiming: pauses excluded) and the totals
// the report's sums of them. Mutation that would silently break it: printing the wall clock
// between observer calls — a Step's pause would read as the block's time.

import (
	"fmt"
	"io"

	"github.com/turbospark/inspector/engine"
)

// PrintRunHeader prints the run's header and the table's column names.
func PrintRunHeader(w io.Writer, sess *engine.Session) {
	s := sess.Report.Settings
	fmt.Fprintf(w, "%s on %s, residency %s, tile %d rows, %d patches (grid %dx%dx%d)\n",
		s.ModelType, s.Backend, s.Residency, s.TileRows, s.Patches, s.Grid[0], s.Grid[1], s.Grid[2])
	for _, iv := range sess.Settings.Interventions() {
		fmt.Fprintf(w, "intervention: %s: %s\n", iv.Name, iv.Effect)
	}
	fmt.Fprintf(w, "memory: about %s\n", engine.EstimateMemory(sess.Checkpoint, sess.Input, sess.Settings))
	for _, note := range append([]string{s.BackendNote}, sess.Notes...) {
		if note != "" {
			fmt.Fprintln(w, "note:", note)
		}
	}
	fmt.Fprintf(w, "%5s %10s %10s %10s %10s %10s %10s\n", "block", "wait ms", "attn ms", "mlp ms", "wall ms", "read", "change")
}

// readText is the bytes a block pread; a mapped block reads through page faults instead.
func readText(t engine.BlockTiming, mode string) string {
	if mode == string(engine.Mapped) {
		return "mapped"
	}
	return engine.FormatBytes(t.BytesRead)
}

// PrintRunBlock prints a block's row (mode: the residency, as the report names it).
func PrintRunBlock(w io.Writer, res engine.BlockResult, mode string) {
	t := res.Timing
	fmt.Fprintf(w, "%5d %10.1f %10.1f %10.1f %10.1f %10s %10.4f\n", t.Block, engine.Millis(t.Wait), engine.Millis(t.Attention), engine.Millis(t.MLP),
		engine.Millis(t.Wall), readText(t, mode), res.Stats.MeanChange)
}

// PrintRunTotals prints the totals row and the embedding's, the merger's and the memory's line.
func PrintRunTotals(w io.Writer, r *engine.Report) {
	t := r.Totals
	fmt.Fprintf(w, "%5s %10.1f %10.1f %10.1f %10.1f %10s\n", "total", t.WaitMS, t.AttentionMS, t.MLPMS, t.WallMS, engine.FormatBytes(t.BytesRead))
	fmt.Fprintf(w, "embed %.1f ms, merger %.1f ms, vision weights %s, peak RSS %s\n",
		r.EmbedMS, r.MergerMS, engine.FormatBytes(t.WeightBytes), engine.FormatBytes(r.PeakRSS))
}
