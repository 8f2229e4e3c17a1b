package main

// verify.go: the CLI's verify — open a checkpoint (a directory, or a Hugging Face repo id
// found in the local cache: engine.ResolveCheckpoint) and describe it, or say what is wrong.
//
// Invariant: verify checks exactly what a run opens (engine.OpenCheckpoint on the same
// resolved directory); the mutation that would silently break it: verifying the name as a
// path while run resolves it — a repo id would fail verify and run fine, or the reverse.

import (
	"fmt"
	"io"
	"sort"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/safetensors"
)

func cmdVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("verify")
	dir := fs.String("checkpoint", "", "checkpoint directory, or a Hugging Face repo id (owner/name[@revision]) in the local cache")
	dump := fs.String("dump", "", "instead: print what a dump (run --dump, the window's export) records about its run: checkpoint, image, page, settings, interventions, version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dump != "" {
		return describeDump(stdout, *dump)
	}
	if *dir == "" {
		return fmt.Errorf("--checkpoint DIR (or a Hugging Face repo id) is required, or --dump FILE")
	}
	resolved, err := engine.ResolveCheckpoint(*dir)
	if err != nil {
		return err
	}
	ck, err := engine.OpenCheckpoint(resolved)
	if err != nil {
		return err
	}
	describe(stdout, ck)
	return nil
}

func describe(w io.Writer, ck *engine.Checkpoint) {
	c := ck.Config
	fmt.Fprintf(w, "checkpoint   %s\n", ck.Dir)
	fmt.Fprintf(w, "model type   %s, the %s family (deepstack: %v)\n", c.ModelType, c.Family(), deepstackText(c))
	fmt.Fprintf(w, "tower        %d blocks, hidden %d, %d heads x %d, mlp %d (%s), out %d\n",
		c.Depth, c.Hidden, c.Heads, c.HeadDim(), c.Intermediate, c.HiddenAct, c.OutHidden)
	table := "none (the 2D rope alone)"
	if c.HasPosEmbed() {
		table = fmt.Sprintf("%dx%d", c.PosGrid(), c.PosGrid())
	}
	fmt.Fprintf(w, "patches      %dx%d, temporal %d, merge %dx%d, position table %s\n",
		c.PatchSize, c.PatchSize, c.TemporalPatchSize, c.MergeSize, c.MergeSize, table)
	if c.WindowSize > 0 {
		u := c.WindowUnits()
		fmt.Fprintf(w, "attention    windows of %d px (%dx%d merge units, %dx%d patches) in every block but %v (whole frames)\n",
			c.WindowSize, u, u, u*c.MergeSize, u*c.MergeSize, c.FullAttBlocks)
	}
	counts := ck.DTypeCounts()
	var dts []string
	for d, n := range counts {
		dts = append(dts, fmt.Sprintf("%s x%d", d, n))
	}
	sort.Strings(dts)
	fmt.Fprintf(w, "tensors      %d vision tensors under %q: %v\n", len(c.ExpectedTensors()), ck.Prefix, dts)
	fmt.Fprintf(w, "weights      %s of vision weights in %d shard(s)\n", engine.FormatBytes(ck.VisionBytes()), len(ck.Shards))
	pre := "preprocessor_config.json"
	if !ck.HasPreprocessor {
		pre = "no preprocessor_config.json: HF class defaults"
	}
	fmt.Fprintf(w, "processor    %s: pixels %d..%d, mean %v, std %v\n", pre, ck.Pre.MinPixels, ck.Pre.MaxPixels, ck.Pre.Mean, ck.Pre.Std)
}

func deepstackText(c engine.Config) string {
	if !c.HasDeepstack() {
		return "none"
	}
	return fmt.Sprint(c.Deepstack)
}

// describeDump prints a dump's provenance (its metadata, sorted by key) and its tensors.
func describeDump(w io.Writer, path string) error {
	f, err := safetensors.Open(path)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "dump         %s\n", path)
	if len(keys) == 0 {
		fmt.Fprintln(w, "provenance   none recorded (not written by the inspector, or by a version before it kept any)")
	}
	for _, k := range keys {
		fmt.Fprintf(w, "%-22s %s\n", k, f.Metadata[k])
	}
	fmt.Fprintf(w, "tensors      %d\n", len(f.Tensors))
	return nil
}
