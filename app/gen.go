package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
)

func cmdGen(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(synth.PresetNames(), ", "))
	out := fs.String("out", "", "output directory (created)")
	dtypeFlag := fs.String("dtype", "", "weight dtype: bf16, f16 or f32 (default: bf16; f32 for the demo)")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out DIR is required")
	}
	var dt dtype.DType
	if *dtypeFlag != "" {
		var err error
		if dt, err = parseDType(*dtypeFlag); err != nil {
			return err
		}
	}
	cfg, err := synth.Preset(*preset)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := synth.Generate(*out, *preset, synth.Options{DType: dt, Seed: *seed}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: preset %s (%s, %d blocks x %d, %d heads) in %.1fs\n",
		*out, *preset, cfg.ModelType, cfg.Depth, cfg.Hidden, cfg.Heads, time.Since(start).Seconds())
	return nil
}

func parseDType(s string) (dtype.DType, error) {
	switch strings.ToLower(s) {
	case "bf16", "bfloat16":
		return dtype.BF16, nil
	case "f16", "fp16", "float16":
		return dtype.F16, nil
	case "f32", "fp32", "float32":
		return dtype.F32, nil
	}
	return "", fmt.Errorf("dtype %q: want bf16, f16 or f32", s)
}
