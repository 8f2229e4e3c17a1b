package main

// compare.go: `inspector compare`, the window's Compare for scripts and CI: one page under two
// settings, measured by engine.CompareSessions (a warm-up pass each, then the sides
// interleaved ABBA over the repetitions), printed per block with each side's median and
// range, the ratio B/A with its 95% interval and the verdict; --json holds every pass.
//
// Invariant: the verdict printed is the Comparison's, from the paired passes; the table's
// medians are per block over the same passes (the table: bench/compare.go). Mutation that
// would silently break it: printing one pass per side (the last one) as "the" times — noise
// would read as a result.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/bench"
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/intervene"
)

type compareFlags struct {
	checkpoint, image, jsonOut string
	a, b                       engine.Settings
	opt                        engine.CompareOptions
}

func parseCompareFlags(args []string) (*compareFlags, error) {
	f := &compareFlags{}
	var aSpec, bSpec string
	fs := newFlagSet("compare")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint directory, or a Hugging Face repo id in the local cache")
	fs.StringVar(&f.image, "image", "", "image file")
	fs.StringVar(&aSpec, "a", "", "side A's settings, e.g. tile=512,residency=mapped (keys: "+strings.Join(settingKeys, ", ")+"; the rest as default)")
	fs.StringVar(&bSpec, "b", "", "side B's settings, as --a")
	fs.IntVar(&f.opt.Reps, "reps", engine.DefaultCompareReps, "timed passes per side, after a warm-up pass each, A and B interleaved ABBA")
	fs.IntVar(&f.opt.MaxReps, "max-reps", 0, "go on past --reps until B/A's 95% interval is within ±2%, up to this many passes")
	fs.IntVar(&f.opt.Blocks, "blocks", 0, "time blocks 0..N-1 only, without the merger (0: every block and the merger)")
	fs.StringVar(&f.jsonOut, "json", "", "write the comparison, every pass of both sides included, as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if f.checkpoint, err = requiredCheckpoint(f.checkpoint); err != nil {
		return nil, err
	}
	if f.image == "" {
		return nil, fmt.Errorf("--image FILE is required")
	}
	if f.a, err = parseSettingSpec("--a", aSpec); err != nil {
		return nil, err
	}
	if f.b, err = parseSettingSpec("--b", bSpec); err != nil {
		return nil, err
	}
	if f.a.MaxPixels != f.b.MaxPixels {
		return nil, fmt.Errorf("--a and --b: max-pixels %d and %d: both sides run one page (give it to both or neither)", f.a.MaxPixels, f.b.MaxPixels)
	}
	if f.opt.Reps < 1 || f.opt.Reps > engine.MaxCompareReps || f.opt.MaxReps < 0 || f.opt.MaxReps > engine.MaxCompareReps {
		return nil, fmt.Errorf("--reps %d, --max-reps %d: want 1 to %d", f.opt.Reps, f.opt.MaxReps, engine.MaxCompareReps)
	}
	if f.opt.Blocks < 0 {
		return nil, fmt.Errorf("--blocks %d: want 0 (all) or more", f.opt.Blocks)
	}
	return f, checkOutputs(newInputs(f.checkpoint, f.image), output{"--json", f.jsonOut})
}

// settingKeys are what --a and --b set: these, and the keys of intervene's table (Kinds).
var settingKeys = append([]string{"backend", "threads", "residency", "slots", "tile", "max-pixels", "ablate (pairs joined by +)", "ablate-mode", "mask (x0+y0+x1+y1)", "mask-keys (x0+y0+x1+y1@B)", "keep-top (K@B)"},
	kindKeys()...)

// kindKeys are the Compare keys of intervene's table, each with its example.
func kindKeys() []string {
	var out []string
	for _, k := range intervene.Kinds() {
		out = append(out, fmt.Sprintf("%s (%s)", k.Flag, k.Example))
	}
	return out
}

// kindOf is the tenant of intervene's table whose key is k.
func kindOf(k string) (intervene.Kind, bool) {
	for _, kind := range intervene.Kinds() {
		if kind.Flag == k {
			return kind, true
		}
	}
	return intervene.Kind{}, false
}

// parseSettingSpec reads "tile=512,residency=mapped" over the default settings.
func parseSettingSpec(flagName, spec string) (engine.Settings, error) {
	s := engine.DefaultSettings(backend.Auto)
	if strings.TrimSpace(spec) == "" {
		return s, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return s, fmt.Errorf("%s %s: want key=value pairs, comma-separated (keys: %s)", flagName, engine.QuoteShort(spec), strings.Join(settingKeys, ", "))
		}
		if strings.TrimSpace(v) == "" { // "ablate=" would run as no ablation at all
			return s, fmt.Errorf("%s %s=: no value; give one, or leave %s out", flagName, k, k)
		}
		n, nerr := strconv.Atoi(v)
		switch k {
		case "backend":
			s.Backend = v
		case "residency":
			r, err := engine.ParseResidency(v)
			if err != nil {
				return s, fmt.Errorf("%s: %w", flagName, err)
			}
			s.Residency = r
		case "mask":
			m, err := engine.ParseMask(strings.ReplaceAll(v, "+", ","))
			if err != nil {
				return s, fmt.Errorf("%s: %w", flagName, err)
			}
			s.Mask = m
		case "mask-keys":
			km, err := engine.ParseKeyMask(strings.ReplaceAll(v, "+", ","))
			if err != nil {
				return s, fmt.Errorf("%s: %w", flagName, err)
			}
			s.KeyMask = km
		case "keep-top":
			k, err := engine.ParseKeepTop(v)
			if err != nil {
				return s, fmt.Errorf("%s: %w", flagName, err)
			}
			s.KeepTop = k
		case "ablate", "ablate-mode":
			heads, mode := s.Ablate.Heads, s.Ablate.Mode
			if k == "ablate" {
				heads = v
			} else {
				mode = v
			}
			a, err := engine.ParseAblation(heads, mode)
			if err != nil {
				return s, fmt.Errorf("%s: %w", flagName, err)
			}
			s.Ablate = a
		case "threads", "slots", "tile", "max-pixels":
			if nerr != nil {
				return s, fmt.Errorf("%s %s=%s: want a whole number", flagName, k, v)
			}
			*map[string]*int{"threads": &s.Threads, "slots": &s.Slots, "tile": &s.TileRows, "max-pixels": &s.MaxPixels}[k] = n
		default:
			kind, ok := kindOf(k)
			if !ok {
				return s, fmt.Errorf("%s: unknown setting %q (keys: %s)", flagName, k, strings.Join(settingKeys, ", "))
			}
			if err := kind.Set(&s.Set, v); err != nil {
				return s, fmt.Errorf("%s: %w", flagName, err)
			}
		}
	}
	if err := s.ValidateAs(func(b engine.Bound) string { return flagName + " " + b.Flag }); err != nil {
		return s, err
	}
	return s, nil
}

func cmdCompare(args []string, stdout, stderr io.Writer) error {
	f, err := parseCompareFlags(args)
	if err != nil {
		return err
	}
	ctx := interruptible("compare")
	defer ctx.Stop()
	a, b := f.a, f.b
	a.Keep.Outputs, b.Keep.Outputs = true, true // the warm-up passes' outputs are compared
	beA, noteA, err := openBackend(&a)
	if err != nil {
		return fmt.Errorf("--a: %w", err)
	}
	sa, err := engine.OpenSession(ctx, f.checkpoint, f.image, a, beA)
	if err != nil {
		return openFailed(ctx, err)
	}
	defer sa.Close()
	beB, noteB, err := openBackend(&b)
	if err != nil {
		return fmt.Errorf("--b: %w", err)
	}
	sb, err := sa.Sibling(ctx, b, beB)
	if err != nil {
		return err
	}
	defer sb.Close()
	for _, n := range []string{noteA, noteB} {
		if n != "" {
			fmt.Fprintln(stderr, "note:", n)
		}
	}
	rep := sa.Report.Settings
	fmt.Fprintf(stdout, "%s, %d patches: A = %s; B = %s\n", rep.ModelType, rep.Patches, sa.Settings.Describe(), sb.Settings.Describe())
	fmt.Fprintf(stdout, "a warm-up pass each, then %d passes per side interleaved ABBA\n", f.opt.Reps)
	c, err := engine.CompareSessions(ctx, sa, sb, f.opt, nil)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: no output written")
		}
		return err
	}
	bench.PrintComparison(stdout, c)
	if c.NonFiniteA != nil || c.NonFiniteB != nil { // said whatever the table scrolled by
		fmt.Fprintln(stderr, "warning:", bench.NonFiniteSides(c))
	}
	if f.jsonOut != "" {
		ctx.Writing(f.jsonOut)
		return writeJSONFile(f.jsonOut, map[string]any{"checkpoint": f.checkpoint, "image": f.image, "patches": rep.Patches,
			"model_type": rep.ModelType, "comparison": c})
	}
	return nil
}
