package main

// outputs.go: a command's output files are checked before any work, with the flag and the
// path the user typed: none may overwrite an input or another output, and each must be
// writable (its folder exists and takes files, the name fits, an existing file is not
// read-only).
//
// The inputs are registered in one place, an inputs value per command: newInputs starts it
// with this program's own executable (selftest's children run from it), the flags that name a
// file add theirs as they are parsed (the checkpoint folder, the image, a mask's or a key
// mask's FILE), and addSettings adds what the run's settings read (engine.Settings.SourceFiles:
// an activation patch's source image). checkOutputs asks it. TestEveryFileFlagIsAnInput
// enumerates every flag of every command and fails when one that names a file is not
// registered.
//
// Invariant: every command that writes a file checks it here first, against every path the
// command reads, the checkpoint folder as a whole included. Mutation that would silently break
// it: registering only the checkpoint and --image (as run once did) — --dump over the
// --patch-from image or a --mask-patches FILE succeeded and the input was gone.

import (
	"fmt"
	"os"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/internal/fsx"
)

// output is an output flag and the path given to it ("" when not given).
type output struct{ flag, path string }

// inputs are the paths a command reads.
type inputs struct{ paths []string }

// newInputs are a command's inputs: this program's executable and paths ("" skipped).
func newInputs(paths ...string) *inputs {
	in := &inputs{}
	if exe, err := os.Executable(); err == nil {
		in.add(exe)
	}
	in.add(paths...)
	return in
}

// add registers paths ("" skipped).
func (in *inputs) add(paths ...string) {
	for _, p := range paths {
		if p != "" {
			in.paths = append(in.paths, p)
		}
	}
}

// addSettings registers what a run under s reads besides its checkpoint and image.
func (in *inputs) addSettings(s engine.Settings) { in.add(s.SourceFiles()...) }

// checkOutputs refuses, before the work, an output over an input or another output, or one
// that cannot be written; the error names the flag.
func checkOutputs(in *inputs, outs ...output) error {
	var before []string
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := fsx.CheckOutputs(in.paths, append(before, o.path)); err != nil {
			return fmt.Errorf("%s %w", o.flag, err)
		}
		if err := fsx.CheckWritable(o.path); err != nil {
			return fmt.Errorf("%s %w", o.flag, err)
		}
		before = append(before, o.path)
	}
	return nil
}
