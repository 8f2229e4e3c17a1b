// Command inspector is the TurboSpark Vision Inspector: the window (gui, the default) and a
// CLI (run, gen, verify) over the same engine.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	// Before fyne's lang package reads the locale (its init): LANG=C.UTF-8 would have it
	// log three lines on every command. See the package's comment.
	_ "github.com/turbospark/inspector/internal/clocale"
	"github.com/turbospark/inspector/selftest"
)

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
	hidden        bool // a child process's command, not listed
}

var commands = []command{
	{"gui", "open the window (the default: the embedded demo checkpoint and photo)", cmdGUI, false},
	{"run", "run the vision tower on an image, print per-block timings, dump tensors", cmdRun, false},
	{"gen", "write a random-weight checkpoint for a preset", cmdGen, false},
	{"verify", "check a checkpoint directory and describe it", cmdVerify, false},
	{"compare", "one image under two settings: per-block medians over interleaved passes, B/A with its interval, the verdict", cmdCompare, false},
	{"sweep", "ablate every head (or block) in turn: how far each block's output and the merger move, as CSV or JSON", cmdSweep, false},
	{"bench", "time the tower per block over patch counts, tile sizes and residency modes", cmdBench, false},
	{"ceiling", "the machine's own compute ceiling: the CPU engine's FMA and AMX kernels on N threads at once, GFLOP/s a thread", cmdCeiling, false},
	{"gpumodel", "what the Metal kernels should take per block and kernel on named Apple GPUs (on a Mac: measured beside)", cmdGPUModel, false},
	{"selftest", "check this machine's backends against the CPU engine (run it first on a Mac)", cmdSelftest, false},
	{"metal-probe", "the start-up probe's child: touch Metal, answer as JSON", cmdMetalProbe, true},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: inspector COMMAND [flags]")
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "Run 'inspector COMMAND -h' for a command's flags.")
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"gui"}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	if _, err := selftest.MetalSetting(); err != nil { // the user's variable: said once, on every command
		fmt.Fprintln(stderr, "inspector: warning:", err)
	}
	for _, c := range commands {
		if c.name == args[0] {
			out := &checkedWriter{w: stdout}
			err := c.run(args[1:], out, stderr)
			if err == nil && out.err != nil { // a table lost on a full disk or a closed pipe is a failure
				err = fmt.Errorf("writing to the standard output: %w", out.err)
			}
			if err != nil {
				fmt.Fprintln(stderr, "inspector "+c.name+":", shortMessage(err.Error()))
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(stderr, "inspector: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// checkedWriter remembers the first failed write (the rest are dropped).
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// newFlagSet is a command's flag set, whose messages (a bad value, the usage) go to stderr
// with every line cut short (shortLines): the flag package quotes a bad value whole.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&shortLines{w: os.Stderr})
	return fs
}

// maxMessage bounds a line of a message to the user; what a value quoted in it adds past that
// is cut, with its length said.
const maxMessage = 1000

// shortMessage is msg cut to maxMessage bytes (on a UTF-8 boundary), saying how long it was.
func shortMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	return fmt.Sprintf("%s… (%d more bytes of the message cut: it quoted a long value)",
		strings.ToValidUTF8(msg[:maxMessage], ""), len(msg)-maxMessage) // no rune cut in two
}

// shortLines writes each line cut to maxMessage bytes.
type shortLines struct{ w io.Writer }

func (s *shortLines) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var out strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		out.WriteString(shortMessage(body))
		if nl {
			out.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(s.w, out.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
