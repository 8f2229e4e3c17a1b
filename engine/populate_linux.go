package engine

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate maps the pages of fresh memory f writable in one call (MADV_POPULATE_WRITE, Linux
// 5.14+) before a copy fills it, where the copy would otherwise fault them in one by one.
// Advice only: the pages hold zeros either way, and an error (an older kernel) changes nothing.
func populate(f []float32) {
	if len(f) == 0 {
		return
	}
	ps := uintptr(os.Getpagesize())
	base := unsafe.Pointer(unsafe.SliceData(f))
	p := uintptr(base)
	lo, hi := (p+ps-1)&^(ps-1), (p+uintptr(4*len(f)))&^(ps-1)
	if hi > lo {
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo), unix.MADV_POPULATE_WRITE)
	}
}
