package main

// sweep.go: the CLI's sweep — one intervention over every head (or every block) of the
// tower, one run each against an unablated run of the same page (engine.Session.Sweep): how
// far each block's output and the merger move when that head (block) is ablated. A
// head-importance table in one command, as CSV or JSON.

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/internal/fsx"
)

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep")
	ckpt := fs.String("checkpoint", "", "checkpoint directory, or a Hugging Face repo id in the local cache")
	image := fs.String("image", "", "image file")
	over := fs.String("over", "heads", "what each run ablates: heads (every head of every block, one at a time) or blocks (every head of one block at a time)")
	mode := fs.String("ablate-mode", engine.AblateZero, "what an ablated head becomes: zero, or mean (its mean over the page's patches)")
	out := fs.String("out", "", "write the table here: .csv, or .json")
	maxPixels := fs.Int("max-pixels", 0, "override the processor's max_pixels (page size)")
	backendName := fs.String("backend", backend.Auto, "compute backend: "+backend.Choices(true))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ckpt == "" || *image == "" || *out == "" {
		return fmt.Errorf("--checkpoint DIR, --image FILE and --out FILE (.csv or .json) are required")
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".csv" && ext != ".json" {
		return fmt.Errorf("--out %s: want a .csv or .json file", *out)
	}
	if *over != "heads" && *over != "blocks" {
		return fmt.Errorf("--over %s: want heads or blocks", *over)
	}
	if _, err := engine.ParseAblation("0:0", *mode); err != nil {
		return fmt.Errorf("--ablate-mode: %w", err)
	}
	resolved, err := engine.ResolveCheckpoint(*ckpt)
	if err != nil {
		return err
	}
	if err := checkOutputs(newInputs(resolved, *image), output{"--out", *out}); err != nil {
		return err
	}
	s := engine.DefaultSettings(*backendName)
	s.MaxPixels = *maxPixels
	s.Keep = engine.Keep{Outputs: true}
	if err := s.ValidateAs(func(b engine.Bound) string { return "--" + b.Flag }); err != nil {
		return err
	}
	ctx := interruptible("sweep")
	defer ctx.Stop()
	be, note, err := openBackend(&s)
	if err != nil {
		return err
	}
	sess, err := engine.OpenSession(ctx, resolved, *image, s, be)
	if err != nil {
		return openFailed(ctx, err)
	}
	defer sess.Close()
	if note != "" {
		fmt.Fprintln(stderr, "note:", note)
	}
	for _, n := range sess.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	if err := sess.CheckSweep(); err != nil { // before the base run, not after it
		return err
	}
	if err := sess.Run.RunAll(ctx); err != nil {
		return err
	}
	if nf := sess.Run.NonFinite; nf != nil { // every row would be NaN: said, and in the JSON
		fmt.Fprintln(stderr, "warning:", nf, "(the base run: every change measured against it is not a number)")
	}
	rows, err := sess.Sweep(ctx, *over, *mode, func(done, of int) {
		fmt.Fprintf(stderr, "\rsweep: %d of %d runs", done, of)
	})
	fmt.Fprintln(stderr)
	if err != nil {
		return err
	}
	ctx.Writing(*out)
	if ext == ".json" {
		return writeJSONFile(*out, struct {
			Checkpoint string            `json:"checkpoint"`
			Image      string            `json:"image"`
			Mode       string            `json:"ablate_mode"`
			Patches    int               `json:"patches"`
			NonFinite  *engine.NonFinite `json:"non_finite,omitempty"` // the base run's first NaN or Inf
			Notes      []string          `json:"notes,omitempty"`
			Rows       []engine.SweepRow `json:"rows"` // a NaN or Inf change is null
		}{resolved, *image, *mode, sess.Run.Layout.Rows(), sess.Run.NonFinite, sess.Notes, rows})
	}
	return fsx.WriteAtomic(*out, func(w io.Writer) error { return writeSweepCSV(w, rows) })
}

func writeSweepCSV(w io.Writer, rows []engine.SweepRow) error {
	cw := csv.NewWriter(w)
	head := []string{"block", "head", "merger_rel_change"}
	if len(rows) > 0 {
		for b := range rows[0].Blocks {
			head = append(head, fmt.Sprintf("block%d_rel_change", b))
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.Block), r.Head, strconv.FormatFloat(r.Merger, 'g', 6, 64)}
		for _, v := range r.Blocks {
			rec = append(rec, strconv.FormatFloat(v, 'g', 6, 64))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
