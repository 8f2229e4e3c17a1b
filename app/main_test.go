package main

// main_test.go: the test binary can be a child. The start-up probe and selftest's Metal
// section run this program again (os.Executable) as `metal-probe` or `selftest --metal-child
// N`; in a test process the program is the test binary, which would ignore those words and run
// the whole suite again, recursively (on a Mac, where Metal is possible, every in-process
// `run` and the window's backends probe). TestMain hands a child's arguments to the program's
// own main instead, so the children are the real ones.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if isChildCommand(os.Args[1:]) {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// isChildCommand says whether args are those of a child process this program starts of
// itself.
func isChildCommand(args []string) bool {
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

// The children this program starts are children the test binary runs as the program.
func TestChildCommandsAreDispatched(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"metal-probe"}, true},
		{[]string{"selftest", "--metal-child", "3", "--no-times"}, true},
		{[]string{"selftest", "--metal-child=0"}, true},
		{[]string{"selftest", "--no-times"}, false},
		{[]string{"-test.run", "TestX"}, false},
		{nil, false},
	} {
		if got := isChildCommand(c.args); got != c.want {
			t.Errorf("isChildCommand(%q) = %v", c.args, got)
		}
	}
}

// Run as the probe, the test binary answers as the program does (not with the suite).
func TestTestBinaryAnswersAsTheProbe(t *testing.T) {
	needsHooks(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "metal-probe")
	cmd.Env = probeEnv(t, t.TempDir(), "")
	out, err := cmd.Output()
	var o probeOutcome
	if err != nil || json.Unmarshal(bytes.TrimSpace(out), &o) != nil || !o.OK {
		t.Fatalf("the test binary as metal-probe: %v\n%s", err, out)
	}
}
