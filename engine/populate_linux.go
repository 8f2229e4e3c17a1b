package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate maps the pages of fresh memory f writable in one call (MADV_POPULATE_WRITE, Linux
// 5.14+) before a copy fills it, where the copy would otherwise fault them in one by one: the
// whole pages inside f (the residency's pageSize and alignUp). Advice only: the pages hold
// zeros either way, and an error (an older kernel) changes nothing.
func populate(f []float32) {
	if len(f) == 0 {
		return
	}
	ps := pageSize()
	start := int64(uintptr(unsafe.Pointer(unsafe.SliceData(f))))
	lo, hi := alignUp(start, ps), (start+4*int64(len(f)))/ps*ps
	if hi > lo {
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f)), lo-start)), hi-lo), unix.MADV_POPULATE_WRITE)
	}
}
