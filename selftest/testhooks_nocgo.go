//go:build inspectortest && !cgo

package selftest

import (
	"os"
	"syscall"
)

// crashInC, in a build without cgo (the static nogui build: no Metal, no probe child that
// could crash in C), ends the process by the signal a C fault would raise.
func crashInC(how string) {
	sig := syscall.SIGABRT
	if how == "segv" {
		sig = syscall.SIGSEGV
	}
	syscall.Kill(os.Getpid(), sig)
	os.Exit(128 + int(sig)) // if the signal was caught
}
