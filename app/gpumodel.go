package main

// gpumodel.go: `inspector gpumodel`'s flags; the model and the measurement are the bench
// package's (bench/gpumodel.go).
//
// Invariant: every flag is checked, and --json against the inputs, before the first block
// runs. Mutation that would silently break it: checking --gpu only when the table is printed
// — the model's minutes of blocks would end in an error.

import (
	"fmt"
	"io"

	"github.com/turbospark/inspector/bench"
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/shaders"
)

func parseGPUModelFlags(args []string) (*bench.GPUModelFlags, string, error) {
	f := &bench.GPUModelFlags{}
	var patches, jsonOut string
	fs := newFlagSet("gpumodel")
	fs.StringVar(&f.Checkpoint, "checkpoint", "", "checkpoint directory, or a Hugging Face repo id in the local cache")
	fs.StringVar(&patches, "patches", "1024,5120", "patch counts, comma-separated (multiples of 4)")
	fs.StringVar(&f.GPU, "gpu", "", "the GPU of the per-kernel table (default: this Mac's when the model knows it, else M3 Max); one of: "+bench.GPUNames())
	fs.IntVar(&f.Tile, "tile", engine.DefaultTileRows, "MLP row tile")
	fs.IntVar(&f.Blocks, "blocks", 2, "blocks run per configuration (the per-kernel table is the last one's)")
	fs.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
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
	if b := engine.TileBound; f.Tile < b.Lo || f.Tile > b.Hi { // a size, not 0: the table names it
		return nil, "", fmt.Errorf("--tile %d: want %d to %d", f.Tile, b.Lo, b.Hi)
	}
	if f.Blocks < 1 || f.Blocks > 1000 {
		return nil, "", fmt.Errorf("--blocks %d: want 1 to 1000", f.Blocks)
	}
	if f.GPU != "" {
		if _, ok := shaders.GPUByName(f.GPU); !ok {
			return nil, "", fmt.Errorf("--gpu %q: the model knows %s", f.GPU, bench.GPUNames())
		}
	}
	return f, jsonOut, checkOutputs(newInputs(f.Checkpoint), output{"--json", jsonOut})
}

func cmdGPUModel(args []string, stdout, stderr io.Writer) error {
	f, jsonOut, err := parseGPUModelFlags(args)
	if err != nil {
		return err
	}
	ctx := interruptible("gpumodel")
	defer ctx.Stop()
	out, err := bench.GPUModel(ctx, f, stdout)
	if err != nil || jsonOut == "" {
		return err
	}
	return writeJSONFile(jsonOut, out)
}
