package main

// main_test.go: the test binary can be a child. The start-up probe and selftest's Metal
// section run this program again (os.Executable) as `metal-probe` or `selftest --metal-child
// N` (selftest.IsChild, whose own test pins the spellings); in a test process the program is the test binary, which would ignore those words and run
// the whole suite again, recursively (on a Mac, where Metal is possible, every in-process
// `run` and the window's backends probe). TestMain hands a child's arguments to the program's
// own main instead, so the children are the real ones.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/turbospark/inspector/internal/cachedir"
	"github.com/turbospark/inspector/selftest"
)

func TestMain(m *testing.M) {
	if selftest.IsChild(os.Args[1:]) {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	narrowToStandin()
	code := m.Run()
	removeBuilt()
	os.Exit(code)
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
	var o struct {
		OK bool `json:"ok"` // the probe's answer (selftest/probe.go's probeOutcome)
	}
	if err != nil || json.Unmarshal(bytes.TrimSpace(out), &o) != nil || !o.OK {
		t.Fatalf("the test binary as metal-probe: %v\n%s", err, out)
	}
}

// probeEnv is the environment of a child run on the stand-in GPU with fault (none if "").
func probeEnv(t *testing.T, cache, fault string, more ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != selftest.EnvTestFault && k != selftest.EnvTestGPU && k != selftest.EnvMetal && k != cachedir.Env {
			env = append(env, kv)
		}
	}
	env = append(env, selftest.EnvTestGPU+"=cpu-standin", cachedir.Env+"="+cache, "INSPECTOR_TEST_CHILD_SILENCE=3s")
	if fault != "" {
		env = append(env, selftest.EnvTestFault+"="+fault)
	}
	return append(env, more...)
}

// metalOnThisMachine says whether this build has Metal to test (a Mac, or the stand-in GPU).
func metalOnThisMachine() bool {
	return os.Getenv(selftest.EnvTestGPU) != "" || runtime.GOOS == "darwin"
}
