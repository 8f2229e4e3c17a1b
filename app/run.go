package main

// run.go: the CLI's run — flags to one engine.Settings, one Session, the per-block table,
// and the dump (with --taps, every block's value of each tap asked for).
//
// Invariant: the dump writes exactly the taps --taps names (out always, as blocks.{i}.out),
// and the run keeps at least those; the mutation that would silently break it: dumping every
// kept tap, which would put the q and k that --attention-query keeps into every such dump.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/turbospark/inspector/bench"
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/jsonx"
)

// runFlags are run's flags: the inputs and outputs, and the run's engine.Settings.
type runFlags struct {
	checkpoint, image, dump, jsonOut, trace string
	query                                   int
	quiet                                   bool
	taps                                    engine.TapSet // written to the dump as blocks.{i}.{tap}
	settings                                engine.Settings
}

func parseRunFlags(args []string) (*runFlags, error) {
	f := &runFlags{}
	s := &f.settings
	var residency, taps, maxMemory, ablate, ablateMode, mask, maskKeys, keepTop string
	fs := newFlagSet("run")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint directory (Hugging Face layout), or a Hugging Face repo id (owner/name[@revision]) in the local cache")
	fs.StringVar(&f.image, "image", "", "image file (PNG, JPEG, WebP, BMP, TIFF, GIF)")
	fs.IntVar(&s.TileRows, "tile", engine.DefaultTileRows, "MLP row tile: rows of fc1 -> gelu -> fc2 at a time")
	fs.StringVar(&residency, "residency", "mapped", "weight residency: mapped or pread")
	fs.IntVar(&s.Slots, "slots", 2, "pread ring size (at least 2)")
	fs.IntVar(&s.Threads, "threads", 0, "CPU threads (0: every core)")
	fs.StringVar(&s.Backend, "backend", backend.Auto, "compute backend: auto (Metal where it runs, else the CPU), "+backend.Choices(false))
	fs.StringVar(&f.dump, "dump", "", "write the run's tensors to this safetensors file")
	fs.IntVar(&f.query, "attention-query", -1, "with --dump: also dump each block's attention row of this query patch")
	fs.StringVar(&taps, "taps", "", "with --dump: also keep and dump these taps of every block as blocks.{i}.{tap}, comma-separated, or all: "+
		strings.Join(engine.TapNames(), ", "))
	fs.StringVar(&f.jsonOut, "json", "", "write settings, timings and memory as JSON to this file")
	fs.StringVar(&f.trace, "trace", "", "write the run's timeline as Chrome trace-event JSON (Perfetto, chrome://tracing) to this file")
	fs.IntVar(&s.MaxPixels, "max-pixels", 0, "override the processor's max_pixels (page size)")
	fs.StringVar(&maxMemory, "max-memory", "", "refuse a run estimated to hold more than this, e.g. 6GiB or 512MiB (default: what RAM, a cgroup's memory limit and ulimit -v leave)")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-block table")
	fs.StringVar(&ablate, "ablate", "", "ablate attention heads where they enter proj: BLOCK:HEAD pairs, comma-separated, * for every head of a block (e.g. 3:5,7:*)")
	fs.StringVar(&ablateMode, "ablate-mode", engine.AblateZero, "what an ablated head becomes: zero, or mean (its mean over the page's patches)")
	fs.StringVar(&s.PatchFrom, "patch-from", "", "activation patching: IMAGE:blocks.B.out@x0,y0,x1,y1 (or @rows:R,R,...): block B's output at those patches taken from IMAGE's run (the same page size); IMAGE:blocks.B.attn.hH@...: head H's slice of what block B's proj reads")
	fs.StringVar(&mask, "mask-patches", "", "occlude patches at the input with the page's mean colour: x0,y0,x1,y1 (patch columns x0..x1-1, rows y0..y1-1), or a FILE of pixel_values rows")
	fs.StringVar(&maskKeys, "mask-keys", "", "mask patches as keys from a block on (no query attends to them; they stay as queries): PATCHES@B, PATCHES as --mask-patches takes them, e.g. 2,2,5,5@3")
	fs.StringVar(&keepTop, "keep-top", "", "drop tokens: after block B only the K merged tokens that received the most attention in block B go on (K@B, e.g. 64@3), or K at random (random:K@B, the control)")
	kinds := intervene.Kinds() // the tenants every surface offers from intervene's table (--scale-head)
	kindValues := make([]string, len(kinds))
	for i, k := range kinds {
		fs.StringVar(&kindValues[i], k.Flag, "", k.Usage)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.checkpoint == "" || f.image == "" {
		return nil, fmt.Errorf("--checkpoint DIR and --image FILE are required")
	}
	resolved, err := engine.ResolveCheckpoint(f.checkpoint) // a folder, or a repo id in the Hugging Face cache
	if err != nil {
		return nil, err
	}
	f.checkpoint = resolved
	if err := s.ValidateAs(func(b engine.Bound) string { return "--" + b.Flag }); err != nil {
		return nil, err
	}
	if f.query < -1 {
		return nil, fmt.Errorf("--attention-query %d: want a patch index (0 or more)", f.query)
	}
	if f.query >= 0 && f.dump == "" {
		return nil, fmt.Errorf("--attention-query %d: the attention rows are written by --dump FILE", f.query)
	}
	if s.Residency, err = engine.ParseResidency(residency); err != nil {
		return nil, err
	}
	if s.MaxMemory, err = parseBytes(maxMemory); err != nil {
		return nil, fmt.Errorf("--max-memory %s: %v", maxMemory, err)
	}
	if f.taps, err = engine.ParseTaps(taps); err != nil {
		return nil, fmt.Errorf("--taps: %w", err)
	}
	if f.taps != 0 && f.dump == "" {
		return nil, fmt.Errorf("--taps %s: the taps are written by --dump FILE", taps)
	}
	s.Keep = engine.Keep{Outputs: f.dump != "", Attention: f.query >= 0, Taps: f.taps}
	if s.Ablate, err = engine.ParseAblation(ablate, ablateMode); err != nil {
		return nil, fmt.Errorf("--ablate: %w", err)
	}
	in := newInputs(f.checkpoint, f.image)
	if s.Mask, err = parseMaskFlag(mask, in); err != nil {
		return nil, fmt.Errorf("--mask-patches: %w", err)
	}
	if s.KeyMask, err = parseKeyMaskFlag(maskKeys, in); err != nil {
		return nil, fmt.Errorf("--mask-keys: %w", err)
	}
	if s.KeepTop, err = engine.ParseKeepTop(keepTop); err != nil {
		return nil, fmt.Errorf("--keep-top: %w", err)
	}
	for i, k := range kinds {
		if err := k.Set(&s.Set, kindValues[i]); err != nil {
			return nil, fmt.Errorf("--%s: %w", k.Flag, err)
		}
	}
	var source string
	if s.PatchFrom, source, _, _, _, err = engine.ParsePatchFrom(s.PatchFrom); err != nil {
		return nil, fmt.Errorf("--patch-from: %w", err)
	}
	if source != "" { // before the run opens: the error names the flag
		if _, err := os.Stat(source); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("--patch-from: the image %s: %v", engine.QuoteShort(source), err)
		}
	}
	in.addSettings(*s)
	if err := checkOutputs(in, output{"--dump", f.dump}, output{"--json", f.jsonOut}, output{"--trace", f.trace}); err != nil {
		return nil, err
	}
	return f, nil
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	ctx := interruptible("run") // before the image opens: a signal then is not lost
	defer ctx.Stop()
	be, note, err := openBackend(&f.settings)
	if err != nil {
		return err
	}
	sess, err := engine.OpenSession(ctx, f.checkpoint, f.image, f.settings, be)
	if err != nil {
		return openFailed(ctx, err)
	}
	defer sess.Close()
	sess.SetBackendNote(note)
	if f.quiet { // the table's note: lines are not printed
		for _, n := range append([]string{note}, sess.Notes...) {
			if n != "" {
				fmt.Fprintln(stderr, "note:", n)
			}
		}
	}
	if S := sess.Run.Layout.Rows(); f.query >= S { // before the work, not after it
		return fmt.Errorf("--attention-query %d: the page has %d patches (0-%d)", f.query, S, S-1)
	}
	if asked, kept := f.settings.Keep.Set(), sess.Settings.Keep.Set(); asked&^kept != 0 { // the dump would fail at the end
		return fmt.Errorf("--dump %s needs the taps %s, which this page cannot keep within the memory limits (%s): lower --max-pixels or ask for fewer --taps",
			f.dump, asked&^kept, strings.Join(sess.Notes, "; "))
	}
	if err := execute(ctx, sess, f.quiet, stdout); err != nil {
		return err
	}
	warn(stderr, sess.Report)
	ctx.Writing(f.outputsText())
	return f.writeOutputs(sess)
}

// outputsText names the outputs being written, as the user gave them.
func (f *runFlags) outputsText() string {
	var names []string
	for _, p := range []string{f.dump, f.jsonOut, f.trace} {
		if p != "" {
			names = append(names, p)
		}
	}
	return strings.Join(names, ", ")
}

// writeOutputs writes what was asked for, each atomically (a failure leaves the old file).
func (f *runFlags) writeOutputs(sess *engine.Session) error {
	if f.dump != "" {
		if err := engine.WriteDump(sess.Run, f.dump, f.query, f.taps); err != nil {
			return err
		}
	}
	if f.jsonOut != "" {
		if err := writeJSONFile(f.jsonOut, sess.Report); err != nil {
			return err
		}
	}
	if f.trace != "" {
		return fsx.WriteAtomic(f.trace, sess.Report.WriteTrace)
	}
	return nil
}

// execute runs the session's page and prints the table as blocks finish.
func execute(ctx context.Context, sess *engine.Session, quiet bool, w io.Writer) error {
	if !quiet {
		bench.PrintRunHeader(w, sess)
		mode := string(sess.Settings.Residency)
		sess.Observers = append(sess.Observers, func(r engine.BlockResult) { bench.PrintRunBlock(w, r, mode) })
	}
	if err := sess.RunAll(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: %s; no output written", sess.Run.CancelNote())
		}
		return err
	}
	if !quiet {
		bench.PrintRunTotals(w, sess.Report)
	}
	return nil
}

// writeJSONFile writes v as indented JSON, atomically; a NaN or Inf number is null (jsonx:
// encoding/json would refuse the whole file after the work was done).
func writeJSONFile(path string, v any) error {
	b, err := jsonx.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fsx.WriteAtomic(path, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}

// parseBytes reads "6GiB", "512MiB", "1.5GB", "4096" (bytes); "" is 0.
func parseBytes(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x*mult < 1 || x*mult > 1<<60 {
		return 0, fmt.Errorf("want a size of at least one byte, such as 6GiB or 512MiB")
	}
	return int64(x * mult), nil
}

// parseMaskFlag reads --mask-patches: a rectangle x0,y0,x1,y1, or a file of pixel_values rows
// (numbers separated by commas, spaces or lines).
// parseKeyMaskFlag reads --mask-keys: PATCHES@B, PATCHES as parseMaskFlag takes them (a
// rectangle, rows:..., or a FILE of pixel_values rows).
func parseKeyMaskFlag(v string, in *inputs) (engine.KeyMask, error) {
	if strings.TrimSpace(v) == "" {
		return engine.KeyMask{}, nil
	}
	i := strings.LastIndex(v, "@")
	if i < 0 {
		return engine.ParseKeyMask(v) // says what it wants
	}
	m, err := parseMaskFlag(v[:i], in)
	if err != nil {
		return engine.KeyMask{}, err
	}
	return engine.ParseKeyMask(strings.TrimPrefix(string(m), "rect:") + v[i:])
}

func parseMaskFlag(v string, in *inputs) (engine.Mask, error) {
	if v == "" {
		return "", nil
	}
	if st, err := os.Stat(v); err == nil && !st.IsDir() {
		in.add(v) // read here: an input of the command
		data, err := fsx.ReadSmall(v, 16<<20)
		if err != nil {
			return "", err
		}
		rows := strings.Join(strings.FieldsFunc(string(data), func(r rune) bool { return r == ',' || unicode.IsSpace(r) }), ",")
		m, err := engine.ParseMask("rows:" + rows)
		if err != nil {
			return "", fmt.Errorf("%s: %w", v, err)
		}
		return m, nil
	}
	return engine.ParseMask(v)
}

// warn says on stderr, whatever --quiet says, what the user must know of a finished run.
func warn(stderr io.Writer, r *engine.Report) {
	if r.NonFinite != nil {
		fmt.Fprintln(stderr, "warning:", r.NonFinite)
	}
}
