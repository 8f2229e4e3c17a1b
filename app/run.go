package main

// run.go: the CLI's run — flags to one engine.Settings, one Session, the per-block table,
// and the dump (with --taps, every block's value of each tap asked for).
//
// Invariant: the dump writes exactly the taps --taps names (out always, as blocks.{i}.out),
// and the run keeps at least those; the mutation that would silently break it: dumping every
// kept tap, which would put the q and k that --attention-query keeps into every such dump.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/turbospark/inspector/engine"
)

// runFlags are run's flags: the inputs and outputs, and the run's engine.Settings.
type runFlags struct {
	checkpoint, image, dump, jsonOut string
	query                            int
	quiet                            bool
	taps                             engine.TapSet // written to the dump as blocks.{i}.{tap}
	settings                         engine.Settings
}

func parseRunFlags(args []string) (*runFlags, error) {
	f := &runFlags{}
	s := &f.settings
	var residency, taps string
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint directory (Hugging Face layout)")
	fs.StringVar(&f.image, "image", "", "image file (PNG, JPEG, WebP, BMP, TIFF, GIF)")
	fs.IntVar(&s.TileRows, "tile", engine.DefaultTileRows, "MLP row tile: rows of fc1 -> gelu -> fc2 at a time")
	fs.StringVar(&residency, "residency", "mapped", "weight residency: mapped or pread")
	fs.IntVar(&s.Slots, "slots", 2, "pread ring size (at least 2)")
	fs.IntVar(&s.Threads, "threads", 0, "CPU threads (0: every core)")
	fs.StringVar(&s.Backend, "backend", backendAuto, "compute backend: auto (Metal where it runs, else the CPU), cpu or metal")
	fs.StringVar(&f.dump, "dump", "", "write the run's tensors to this safetensors file")
	fs.IntVar(&f.query, "attention-query", -1, "with --dump: also dump each block's attention row of this query patch")
	fs.StringVar(&taps, "taps", "", "with --dump: also keep and dump these taps of every block as blocks.{i}.{tap}, comma-separated, or all: "+
		strings.Join(engine.TapNames(), ", "))
	fs.StringVar(&f.jsonOut, "json", "", "write settings, timings and memory as JSON to this file")
	fs.IntVar(&s.MaxPixels, "max-pixels", 0, "override the processor's max_pixels (page size)")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-block table")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.checkpoint == "" || f.image == "" {
		return nil, fmt.Errorf("--checkpoint DIR and --image FILE are required")
	}
	if s.TileRows < 1 {
		return nil, fmt.Errorf("--tile %d: must be at least 1", s.TileRows)
	}
	var err error
	if s.Residency, err = engine.ParseResidency(residency); err != nil {
		return nil, err
	}
	if f.taps, err = engine.ParseTaps(taps); err != nil {
		return nil, fmt.Errorf("--taps: %w", err)
	}
	if f.taps != 0 && f.dump == "" {
		return nil, fmt.Errorf("--taps %s: the taps are written by --dump FILE", taps)
	}
	s.Keep = engine.Keep{Outputs: f.dump != "", Attention: f.query >= 0, Taps: f.taps}
	return f, nil
}

func cmdRun(args []string, stdout io.Writer) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	be, note, err := openBackend(&f.settings)
	if err != nil {
		return err
	}
	sess, err := engine.OpenSession(f.checkpoint, f.image, f.settings, be)
	if err != nil {
		return err
	}
	defer sess.Close()
	sess.SetBackendNote(note)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := execute(ctx, sess, f.quiet, stdout); err != nil {
		return err
	}
	if f.dump != "" {
		if err := sess.Run.WriteDump(f.dump, f.query, f.taps); err != nil {
			return err
		}
	}
	if f.jsonOut != "" {
		if err := writeJSONFile(f.jsonOut, sess.Report); err != nil {
			return err
		}
	}
	return nil
}

// execute runs the session's page and prints the table as blocks finish.
func execute(ctx context.Context, sess *engine.Session, quiet bool, w io.Writer) error {
	if !quiet {
		printHeader(w, sess)
		mode := string(sess.Settings.Residency)
		sess.Observers = append(sess.Observers, func(r engine.BlockResult) { printBlock(w, r, mode) })
	}
	if err := sess.RunAll(ctx); err != nil {
		return err
	}
	if !quiet {
		printTotals(w, sess.Report)
	}
	return nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
