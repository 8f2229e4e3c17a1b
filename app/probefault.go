package main

// probefault.go: the fault-injection hook of the child processes that touch Metal (the start-up
// probe, selftest's Metal section), for tests only: INSPECTOR_TEST_FAULT=WHERE:HOW makes the
// child fault the way a crash in C, Objective-C or libffi would, when it reaches WHERE. HOW:
// segv (a write through a null pointer in C), abort (C's abort(), as an uncaught NSException
// or a validation-layer assertion ends), hang (never returns), exit (exits 3 without an
// answer). Only children call injectFault; the variable means nothing to a parent.

import (
	"os"
	"strings"
	"time"
)

// injectFault faults as INSPECTOR_TEST_FAULT asks when where contains its WHERE.
func injectFault(where string) {
	spec := os.Getenv(envTestFault)
	at, how, ok := strings.Cut(spec, ":")
	if !ok || at == "" || !strings.Contains(where, at) {
		return
	}
	switch how {
	case "segv", "abort":
		crashInC(how)
	case "hang":
		for {
			time.Sleep(time.Hour)
		}
	case "exit":
		os.Exit(3)
	}
}
