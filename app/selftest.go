package main

// selftest.go: `inspector selftest`'s flags; the checks, and the Metal section's children,
// are the selftest package's. `selftest --metal-child N` is such a child.
//
// Invariant: --report is checked against the inputs before any check runs (outputs.go).
// Mutation that would silently break it: checking it only when writing — a selftest of
// minutes would end in "cannot write".

import (
	"fmt"
	"io"

	"github.com/turbospark/inspector/selftest"
)

func cmdSelftest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("selftest")
	which := fs.String("backend", "all", selftest.WhichHelp())
	noTimes := fs.Bool("no-times", false, "skip the kernel timings at the 8B model's shapes")
	reportOut := fs.String("report", "", "also write the whole result as JSON to this file (attach it to a bug report)")
	child := fs.Int("metal-child", -1, "(internal) run the Metal section from this check on, as events on stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := selftest.CheckWhich(*which); err != nil {
		return err
	}
	if *child >= 0 {
		return selftest.MetalChild(*child, *noTimes, stdout)
	}
	if err := checkOutputs(newInputs(), output{"--report", *reportOut}); err != nil {
		return err
	}
	o := selftest.Options{Which: *which, NoTimes: *noTimes}
	if *reportOut != "" {
		o.Save = func(r *selftest.Report) error {
			if err := writeJSONFile(*reportOut, r); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "report: %s (attach it to a bug report)\n", *reportOut)
			return nil
		}
	}
	return selftest.Run(stdout, o)
}

// cmdMetalProbe is the start-up probe's child (selftest.ProbeChild).
func cmdMetalProbe(args []string, stdout, stderr io.Writer) error { return selftest.ProbeChild(stdout) }
