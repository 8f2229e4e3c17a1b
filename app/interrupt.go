package main

// interrupt.go: how a command stops on SIGINT, SIGTERM or SIGHUP (Ctrl-C, kill, a closed
// terminal). The first signal cancels the work and the command says so; one that comes while
// the outputs are written lets them finish (seconds at most) and says that instead. A second
// signal quits at once, after removing the temporaries of the writes in progress: their
// targets stay as they were.
//
// Invariant: no exit leaves a temporary file behind. Mutation that would silently break it:
// os.Exit on the second signal without fsx.RemoveTemporaries — a hidden file of up to the
// dump's size stays beside the target.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/turbospark/inspector/internal/fsx"
)

// stopSignals are the signals a command stops on.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interrupt is a command's context, cancelled by the first stop signal.
type interrupt struct {
	context.Context
	command string
	cancel  context.CancelFunc
	sig     chan os.Signal
	writing atomic.Pointer[string] // the outputs being written, nil while the work runs
}

// interruptible arms the stop signals for command (before anything slow, such as opening
// a large image: a signal that came earlier would be lost where it starts ignored).
func interruptible(command string) *interrupt {
	ctx, cancel := context.WithCancel(context.Background())
	i := &interrupt{Context: ctx, command: command, cancel: cancel, sig: make(chan os.Signal, 2)}
	signal.Notify(i.sig, stopSignals...)
	go i.watch()
	return i
}

func (i *interrupt) watch() {
	s, ok := <-i.sig
	if !ok {
		return
	}
	if w := i.writing.Load(); w != nil {
		fmt.Fprintf(os.Stderr, "inspector %s: %s: finishing the write of %s (%s to stop it: the file then stays as it was)\n",
			i.command, signalName(s), *w, again(s))
	} else {
		fmt.Fprintf(os.Stderr, "inspector %s: %s: stopping (%s to quit now)\n", i.command, signalName(s), again(s))
		i.cancel()
	}
	if s, ok := <-i.sig; ok {
		fsx.RemoveTemporaries()
		fmt.Fprintf(os.Stderr, "inspector %s: %s again: quitting now; no file was changed by the write in progress\n", i.command, signalName(s))
		os.Exit(exitCode(s))
	}
}

// Writing says the work is done and the outputs named by what are being written: a first
// signal from now on lets them finish.
func (i *interrupt) Writing(what string) { i.writing.Store(&what) }

// openFailed words an OpenSession that a signal stopped (the only work opening runs is an
// activation patch's source image); any other error is err.
func openFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errors.New("interrupted before block 0 (while the --patch-from image ran); no output written")
	}
	return err
}

// Stop disarms the signals.
func (i *interrupt) Stop() {
	signal.Stop(i.sig)
	close(i.sig)
	i.cancel()
}

// signalName is how a signal is named to the user.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	}
	return s.String()
}

// again is how to send a second signal.
func again(s os.Signal) string {
	if s == os.Interrupt {
		return "Ctrl-C again"
	}
	return "a second signal"
}

// exitCode is the shell's code for a death by s: 128 + its number.
func exitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}
