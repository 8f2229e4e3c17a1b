package main

// bench.go: `inspector bench`'s flags (the sweep and its children are the bench package's),
// and the flag values the timing commands share: a required checkpoint, patch counts, lists
// of integers.
//
// Invariant: every value is checked, and the outputs against the inputs, before the first
// child starts. Mutation that would silently break it: checking --residency in the child —
// a sweep would fail after minutes, at its first pread configuration.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/bench"
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
)

func parseBenchFlags(args []string) (*bench.Flags, string, error) {
	f := &bench.Flags{}
	var patches, tiles, residencies, jsonOut string
	fs := newFlagSet("bench")
	fs.StringVar(&f.Checkpoint, "checkpoint", "", "checkpoint directory, or a Hugging Face repo id in the local cache")
	fs.StringVar(&patches, "patches", "1024", "patch counts, comma-separated (each a multiple of 4: a page of 2x2 merge groups)")
	fs.StringVar(&tiles, "tile", strconv.Itoa(engine.DefaultTileRows), "MLP row tiles, comma-separated")
	fs.StringVar(&residencies, "residency", "mapped", "residency modes, comma-separated: mapped, pread")
	fs.IntVar(&f.Threads, "threads", 0, "CPU threads (0: every core)")
	fs.IntVar(&f.Blocks, "blocks", 4, "blocks timed per configuration (from block 0)")
	fs.StringVar(&f.Backend, "backend", cpu.Name, "compute backend: "+backend.Choices(false))
	fs.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
	fs.BoolVar(&f.GEMM, "gemm", false, "also time block 0's four matrix products alone at rows = patches (GFLOP/s of the fastest of 5 calls)")
	fs.BoolVar(&f.Loops, "loops", false, "also show where the CPU backend's threads wait: each parallel loop's wall, its tasks' time and the threads' idle share, per call site")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the timed blocks to this file (one configuration only)")
	fs.BoolVar(&f.One, "one", false, "run one configuration and print its result as JSON (what the sweep's children do)")
	if err := fs.Parse(args); err != nil {
		return nil, "", err
	}
	var err error
	if f.Checkpoint, err = requiredCheckpoint(f.Checkpoint); err != nil {
		return nil, "", err
	}
	if f.Patches, err = parsePatches(patches); err != nil {
		return nil, "", err
	}
	if f.Tiles, err = intList("--tile", tiles, engine.TileBound.Lo, engine.TileBound.Hi); err != nil { // a size each: the table names it
		return nil, "", err
	}
	for _, r := range strings.Split(residencies, ",") {
		if _, err := engine.ParseResidency(r); err != nil {
			return nil, "", err
		}
		f.Residencies = append(f.Residencies, r)
	}
	if err := engine.ThreadsBound.Check("--threads", f.Threads); err != nil {
		return nil, "", err
	}
	if f.Blocks < 1 || f.Blocks > 1000 {
		return nil, "", fmt.Errorf("--blocks %d: want 1 to 1000", f.Blocks)
	}
	if err := checkOutputs(newInputs(f.Checkpoint), output{"--json", jsonOut}, output{"--cpuprofile", f.CPUProfile}); err != nil {
		return nil, "", err
	}
	if f.CPUProfile != "" && len(f.Patches)*len(f.Tiles)*len(f.Residencies) > 1 {
		return nil, "", fmt.Errorf("--cpuprofile: profile one configuration at a time (one patch count, tile and residency)")
	}
	return f, jsonOut, nil
}

// requiredCheckpoint resolves a --checkpoint that must be given (a folder, or a repo id in
// the Hugging Face cache).
func requiredCheckpoint(v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("--checkpoint DIR is required")
	}
	return engine.ResolveCheckpoint(v)
}

// parsePatches parses --patches: patch counts, each a page of whole 2x2 merge groups.
func parsePatches(v string) ([]int, error) {
	patches, err := intList("--patches", v, 4, 1<<20)
	if err != nil {
		return nil, err
	}
	for _, p := range patches {
		if p%4 != 0 {
			return nil, fmt.Errorf("--patches %d: want a multiple of 4 (whole 2x2 merge groups)", p)
		}
	}
	return patches, nil
}

// intList parses a comma-separated list of integers in [lo, hi].
func intList(name, v string, lo, hi int) ([]int, error) {
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%s %q: want integers from %d to %d, comma-separated", name, v, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	f, jsonOut, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	ctx := interruptible("bench")
	defer ctx.Stop()
	results, err := bench.Run(ctx, f, stdout)
	if err != nil || f.One || jsonOut == "" {
		return err
	}
	return writeJSONFile(jsonOut, map[string]any{"checkpoint": f.Checkpoint, "threads": f.Threads, "results": results})
}
