//go:build cgo

package main

// arenas_linux.go: under ulimit -v (a finite RLIMIT_AS), glibc's malloc is held to two arenas
// before anything runs. Without it every thread of this cgo binary reserves a 64 MiB arena of
// its own as it starts (measured: one per thread, up to glibc's 8 a core): by main the process
// maps about 1.6 GiB, the Go runtime's own 1.1 GiB of reservations included, and under
// `ulimit -v 1572864` (1.5 GiB) 4 of 30 starts died in "fatal error: out of memory" inside
// fyne's package init, before any of our code ran; the arenas of threads started during a
// run would also take room the memory check (engine/guard) promised the Go heap.
// Two arenas (the main one and one more) keep C's threads (GL's, llvmpipe's) from all waiting
// on one lock; nothing changes without a limit.
//
// Invariant: the cap is set by a C constructor, which runs before the Go runtime starts its
// first thread, and engine learns of it (SetMallocArenas) so it counts no arenas to come.
// Mutation that would silently break it: setting it from a Go init instead — by then the
// runtime's threads have made their arenas, and the starts that died in fyne's init still die.

/*
#include <malloc.h>
#include <sys/resource.h>

static int arenaCap;

__attribute__((constructor)) static void capArenas(void) {
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && mallopt(M_ARENA_MAX, 2) == 1) {
		arenaCap = 2;
	}
}

static int arenasCapped(void) { return arenaCap; }
*/
import "C"

import "github.com/turbospark/inspector/engine"

func init() { engine.SetMallocArenas(int(C.arenasCapped())) }
