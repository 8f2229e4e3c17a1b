//go:build inspectortest && cgo

package selftest

/*
#include <stdlib.h>
static void ts_segv(void) { *(volatile int*)0 = 1; }
static void ts_abort(void) { abort(); }
*/
import "C"

// crashInC faults in C: a write through a null pointer (segv) or abort().
func crashInC(how string) {
	if how == "segv" {
		C.ts_segv()
	}
	C.ts_abort()
}
