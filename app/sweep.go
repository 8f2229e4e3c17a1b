package main

// sweep.go: the CLI's sweep — one intervention over every head (or every block) of the
// tower, one run each against an unablated run of the same page: how far each block's output
// and the merger move when that head (block) is ablated. A head-importance table in one
// command, as CSV or JSON.
//
// Invariant: every row compares with the same unablated run, on one engine (the weights read
// once), and a row's change before its block is exactly 0 (the engine leaves earlier blocks
// bit for bit). Mutation that would silently break it: comparing each run with the previous
// ablated one: every row would measure two ablations at once.

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/internal/fsx"
)

// sweepRow is one ablated run: what it ablated and how far it moved the outputs.
type sweepRow struct {
	Block  int       `json:"block"`
	Head   string    `json:"head"` // a head's index, or "*" for the block's every head
	Merger float64   `json:"merger_rel_change"`
	Blocks []float64 `json:"block_rel_change"` // per block: ||out - base|| / ||base||
}

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "checkpoint directory, or a Hugging Face repo id in the local cache")
	image := fs.String("image", "", "image file")
	over := fs.String("over", "heads", "what each run ablates: heads (every head of every block, one at a time) or blocks (every head of one block at a time)")
	mode := fs.String("ablate-mode", engine.AblateZero, "what an ablated head becomes: zero, or mean (its mean over the page's patches)")
	out := fs.String("out", "", "write the table here: .csv, or .json")
	maxPixels := fs.Int("max-pixels", 0, "override the processor's max_pixels (page size)")
	backendName := fs.String("backend", backendAuto, "compute backend: auto, cpu or metal")
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
	if err := checkOutputs([]string{resolved, *image}, output{"--out", *out}); err != nil {
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
	sess, err := engine.OpenSession(resolved, *image, s, be)
	if err != nil {
		return err
	}
	defer sess.Close()
	if note != "" {
		fmt.Fprintln(stderr, "note:", note)
	}
	if err := sess.Run.RunAll(ctx); err != nil {
		return err
	}
	rows, err := sweep(ctx, sess, *over, *mode, func(done, of int) {
		fmt.Fprintf(stderr, "\rsweep: %d of %d runs", done, of)
	})
	fmt.Fprintln(stderr)
	if err != nil {
		return err
	}
	ctx.Writing(*out)
	if ext == ".json" {
		return writeJSONFile(*out, struct {
			Checkpoint string     `json:"checkpoint"`
			Image      string     `json:"image"`
			Mode       string     `json:"ablate_mode"`
			Patches    int        `json:"patches"`
			Rows       []sweepRow `json:"rows"`
		}{resolved, *image, *mode, sess.Run.Layout.Rows(), rows})
	}
	return fsx.WriteAtomic(*out, func(w io.Writer) error { return writeSweepCSV(w, rows) })
}

// sweep runs the session's page once per head (or block) with it ablated, on the session's
// engine, against the session's finished (unablated) run.
func sweep(ctx context.Context, sess *engine.Session, over, mode string, progress func(done, of int)) ([]sweepRow, error) {
	c := sess.Checkpoint.Config
	base := sess.Run.Probes.Outputs()
	var units [][2]string
	for b := range c.Depth {
		if over == "blocks" {
			units = append(units, [2]string{strconv.Itoa(b), "*"})
			continue
		}
		for h := range c.Heads {
			units = append(units, [2]string{strconv.Itoa(b), strconv.Itoa(h)})
		}
	}
	var rows []sweepRow
	for i, u := range units {
		a, err := engine.ParseAblation(u[0]+":"+u[1], mode)
		if err != nil {
			return nil, err
		}
		run, err := sess.Engine.StartWith(sess.Input, a)
		if err != nil {
			return nil, err
		}
		err = run.RunAll(ctx)
		if err == nil {
			row := sweepRow{Head: u[1], Merger: relChange(run.Merger, sess.Run.Merger)}
			row.Block, _ = strconv.Atoi(u[0])
			for b, o := range run.Probes.Outputs() {
				row.Blocks = append(row.Blocks, relChange(o, base[b]))
			}
			rows = append(rows, row)
		}
		run.Close()
		if err != nil {
			return nil, err
		}
		progress(i+1, len(units))
	}
	return rows, nil
}

// relChange is ||a - b|| / ||b|| in float64 (0 when a is b bit for bit).
func relChange(a, b []float32) float64 {
	var d, n float64
	for i := range b {
		x := float64(a[i]) - float64(b[i])
		d += x * x
		n += float64(b[i]) * float64(b[i])
	}
	if n == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / n)
}

func writeSweepCSV(w io.Writer, rows []sweepRow) error {
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
