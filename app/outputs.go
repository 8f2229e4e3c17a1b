package main

// outputs.go: a command's output files are checked before any work, with the flag and the
// path the user typed: none may overwrite an input (anything in the checkpoint folder,
// whatever the run opens; the image) or another output, and each must be writable (its
// folder exists and takes files, the name fits, an existing file is not read-only).
//
// Invariant: every command that writes a file checks it here first, against the checkpoint
// folder itself, not only the files it will open. Mutation that would silently break it:
// passing nil inputs (bench and gpumodel once did: their --json replaced the checkpoint
// they read, exit 0).

import (
	"fmt"

	"github.com/turbospark/inspector/internal/fsx"
)

// output is an output flag and the path given to it ("" when not given).
type output struct{ flag, path string }

// checkOutputs refuses, before the work, an output over an input or another output, or one
// that cannot be written; the error names the flag.
func checkOutputs(inputs []string, outs ...output) error {
	var before []string
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := fsx.CheckOutputs(inputs, append(before, o.path)); err != nil {
			return fmt.Errorf("%s %w", o.flag, err)
		}
		if err := fsx.CheckWritable(o.path); err != nil {
			return fmt.Errorf("%s %w", o.flag, err)
		}
		before = append(before, o.path)
	}
	return nil
}
