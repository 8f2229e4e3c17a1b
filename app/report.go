package main

import (
	"fmt"
	"io"

	"github.com/turbospark/inspector/engine"
)

var ms = engine.Millis

func printHeader(w io.Writer, sess *engine.Session) {
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

func printBlock(w io.Writer, res engine.BlockResult, mode string) {
	t := res.Timing
	fmt.Fprintf(w, "%5d %10.1f %10.1f %10.1f %10.1f %10s %10.4f\n", t.Block, ms(t.Wait), ms(t.Attention), ms(t.MLP),
		ms(t.Wall), readText(t, mode), res.Stats.MeanChange)
}

func printTotals(w io.Writer, r *engine.Report) {
	t := r.Totals
	fmt.Fprintf(w, "%5s %10.1f %10.1f %10.1f %10.1f %10s\n", "total", t.WaitMS, t.AttentionMS, t.MLPMS, t.WallMS, engine.FormatBytes(t.BytesRead))
	fmt.Fprintf(w, "embed %.1f ms, merger %.1f ms, vision weights %s, peak RSS %s\n",
		r.EmbedMS, r.MergerMS, engine.FormatBytes(t.WeightBytes), engine.FormatBytes(r.PeakRSS))
}

// warn says on stderr, whatever --quiet says, what the user must know of a finished run.
func warn(stderr io.Writer, r *engine.Report) {
	if r.NonFinite != nil {
		fmt.Fprintln(stderr, "warning:", r.NonFinite)
	}
}
