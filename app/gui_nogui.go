//go:build nogui

package main

// gui_nogui.go: the inspector without its window (go build -tags nogui), for a headless
// server or a machine without cgo: every command but gui, as a static binary
// (CGO_ENABLED=0). scripts/bench-16core.sh carries one to a machine with no Go.

import (
	"errors"
	"io"
)

func cmdGUI(args []string, stdout, stderr io.Writer) error {
	return errors.New("this inspector was built without its window (-tags nogui): use run, bench, compare or another command (inspector help)")
}
