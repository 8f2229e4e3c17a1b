package main

// windowlimit.go: under ulimit -v the window needs room the CLI does not: the OpenGL driver
// (Mesa's llvmpipe maps its LLVM and a shader cache), GLFW and Fyne's textures. Measured on
// Debian 12 with Mesa's llvmpipe: below about 1.6 GiB of address space the driver cannot be
// loaded and no window appears (the process would wait for ever), between 1.60 and 1.68 GiB
// it dies in C (glfwCreateWindow, LLVM's "Unable to allocate section memory"), from 1.69 GiB
// it runs. So the window refuses to start below minWindowAS, saying so, rather than hang or
// crash where no Go code can catch it.
//
// Invariant: the check is made before anything loads the GL driver. Mutation that would
// silently break it: checking after fyneapp.New — the crash comes first.

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine"
)

// minWindowAS is the least address space (RLIMIT_AS) the window starts in, with some margin
// over the measured 1.69 GiB.
const minWindowAS = 1792 << 20

// checkWindowAS refuses to open the window under an address-space limit it cannot start in.
func checkWindowAS() error {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) != nil || rl.Cur == unix.RLIM_INFINITY || rl.Cur >= minWindowAS {
		return nil
	}
	return fmt.Errorf("the window needs at least %s of address space (its OpenGL driver maps much of it); ulimit -v is %d KiB (%s): "+
		"raise it to %d or more, or use the CLI (inspector run), which needs less",
		engine.FormatBytes(minWindowAS), rl.Cur>>10, engine.FormatBytes(int64(rl.Cur)), int64(minWindowAS)>>10)
}
