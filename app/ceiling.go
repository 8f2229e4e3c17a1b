package main

// ceiling.go: `inspector ceiling`'s flags; the measurement and its table are the bench
// package's (bench/ceiling.go).
//
// Invariant: the thread counts and the time are checked before the first unit runs.
// Mutation that would silently break it: taking --seconds NaN (every comparison false) —
// the ceiling would run for no time and print rates of nothing.

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/bench"
	"github.com/turbospark/inspector/engine"
)

func cmdCeiling(args []string, stdout, stderr io.Writer) error {
	var threadList string
	var seconds float64
	var asJSON bool
	fs := newFlagSet("ceiling")
	fs.StringVar(&threadList, "threads", defaultCeilingThreads(), "thread counts, comma-separated")
	fs.Float64Var(&seconds, "seconds", 0.5, "time per unit and thread count (0.05 to 60)")
	fs.BoolVar(&asJSON, "json", false, "print the rates as JSON instead of a table")
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	threads, err := intList("--threads", threadList, engine.ThreadsBound.Lo, engine.ThreadsBound.Hi)
	if err != nil {
		return err
	}
	if !(seconds >= 0.05 && seconds <= 60) {
		return fmt.Errorf("--seconds %g: want 0.05 to 60", seconds)
	}
	ctx := interruptible("ceiling")
	defer ctx.Stop()
	return bench.Ceiling(ctx, threads, seconds, asJSON, stdout)
}

// defaultCeilingThreads is 1, 2, 4, ... and every core.
func defaultCeilingThreads() string {
	var s []string
	for n := 1; n < runtime.NumCPU(); n *= 2 {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(append(s, strconv.Itoa(runtime.NumCPU())), ",")
}
