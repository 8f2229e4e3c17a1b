// Package selftest is where Metal is first touched: in child processes of this program, so
// that a fault in C, Objective-C, libffi or Apple's compiler kills a child, not the window.
// The start-up probe (probe.go) decides whether Metal is available (its registration in the
// backend registry, register.go); `inspector selftest` (selftest.go) checks the CPU here and
// Metal in children (selftest_child.go). The tests' build (-tags inspectortest) adds a
// stand-in GPU and injected faults (testhooks.go). The app parses the commands' flags and
// calls Run, MetalChild and ProbeChild.
package selftest

// child.go: the child processes' command lines. The parent starts this program again
// (os.Executable) with them; the program's main (and a test binary's TestMain, which is the
// program in a test) hands them here.
//
// Invariant: IsChild recognises exactly the command lines the parents start (probeArgs,
// sectionArgs). Mutation that would silently break it: a parent starting a child with a
// spelling IsChild does not know (-metal-child=N) — a test binary would run its whole suite
// again as the child, recursively.

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// probeArgs is the start-up probe child's command line.
func probeArgs() []string { return []string{"metal-probe"} }

// sectionArgs is the command line of a child of selftest's Metal section from check from on.
func sectionArgs(from int, noTimes bool) []string {
	args := []string{"selftest", "--metal-child", strconv.Itoa(from)}
	if noTimes {
		args = append(args, "--no-times")
	}
	return args
}

// IsChild says whether args are those of a child process this program starts of itself.
func IsChild(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "metal-probe":
		return true
	case "selftest":
		return slices.ContainsFunc(args[1:], func(a string) bool {
			return a == "--metal-child" || a == "-metal-child" || strings.HasPrefix(a, "--metal-child=") || strings.HasPrefix(a, "-metal-child=")
		})
	}
	return false
}

// RunChild runs the child args name (IsChild), writing its answer on stdout: what a test
// binary runs as the program's children.
func RunChild(args []string, stdout io.Writer) error {
	if args[0] == "metal-probe" {
		return ProbeChild(stdout)
	}
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	from := fs.Int("metal-child", -1, "")
	noTimes := fs.Bool("no-times", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *from < 0 {
		return fmt.Errorf("--metal-child %d: want a check's index", *from)
	}
	return MetalChild(*from, *noTimes, stdout)
}
