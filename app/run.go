package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/imageproc"
)

type runFlags struct {
	checkpoint, image, residency, dump, jsonOut, backend string
	tile, threads, slots, query, maxPixels               int
	quiet                                                bool
}

func parseRunFlags(args []string) (*runFlags, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint directory (Hugging Face layout)")
	fs.StringVar(&f.image, "image", "", "image file (PNG, JPEG, WebP, BMP, TIFF, GIF)")
	fs.IntVar(&f.tile, "tile", engine.DefaultTileRows, "MLP row tile: rows of fc1 -> gelu -> fc2 at a time")
	fs.StringVar(&f.residency, "residency", "mapped", "weight residency: mapped or pread")
	fs.IntVar(&f.slots, "slots", 2, "pread ring size (at least 2)")
	fs.IntVar(&f.threads, "threads", 0, "CPU threads (0: every core)")
	fs.StringVar(&f.backend, "backend", backendAuto, "compute backend: auto (Metal where it runs, else the CPU), cpu or metal")
	fs.StringVar(&f.dump, "dump", "", "write the run's tensors to this safetensors file")
	fs.IntVar(&f.query, "attention-query", -1, "with --dump: also dump each block's attention row of this query patch")
	fs.StringVar(&f.jsonOut, "json", "", "write settings, timings and memory as JSON to this file")
	fs.IntVar(&f.maxPixels, "max-pixels", 0, "override the processor's max_pixels (page size)")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-block table")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.checkpoint == "" || f.image == "" {
		return nil, fmt.Errorf("--checkpoint DIR and --image FILE are required")
	}
	if f.tile < 1 {
		return nil, fmt.Errorf("--tile %d: must be at least 1", f.tile)
	}
	return f, nil
}

func cmdRun(args []string, stdout io.Writer) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	mode, err := engine.ParseResidency(f.residency)
	if err != nil {
		return err
	}
	ck, err := engine.OpenCheckpoint(f.checkpoint)
	if err != nil {
		return err
	}
	if f.maxPixels > 0 {
		ck.Pre.MaxPixels = f.maxPixels
	}
	be, note, err := openBackend(f.backend, f.threads)
	if err != nil {
		return err
	}
	eng, err := engine.NewEngine(ck, be, engine.Options{Residency: mode, Slots: f.slots, TileRows: f.tile,
		KeepOutputs: f.dump != "", KeepAttention: f.query >= 0})
	if err != nil {
		return err
	}
	defer eng.Close()
	in, err := eng.LoadImage(f.image, imageproc.DefaultLimits())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, run, err := execute(ctx, eng, in, f, note, stdout)
	if err != nil {
		return err
	}
	defer run.Close()
	if f.dump != "" {
		if err := run.WriteDump(f.dump, f.query); err != nil {
			return err
		}
	}
	if f.jsonOut != "" {
		if err := writeJSONFile(f.jsonOut, rep); err != nil {
			return err
		}
	}
	return nil
}

// execute runs the page and prints the table as blocks finish.
func execute(ctx context.Context, eng *engine.Engine, in *engine.Input, f *runFlags, backendNote string, w io.Writer) (*engine.Report, *engine.Run, error) {
	start := time.Now()
	run, err := eng.Start(in)
	if err != nil {
		return nil, nil, err
	}
	rep := engine.NewReport(eng, in, f.checkpoint, f.image)
	rep.Settings.BackendNote = backendNote
	if !f.quiet {
		printHeader(w, rep)
		mode := string(eng.Opts.Residency)
		run.Observers = append(run.Observers, func(r engine.BlockResult) { printBlock(w, r, mode) })
	}
	if err := run.RunAll(ctx); err != nil {
		run.Close()
		return nil, nil, err
	}
	rep.Finish(run, time.Since(start))
	if !f.quiet {
		printTotals(w, rep)
	}
	return rep, run, nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
