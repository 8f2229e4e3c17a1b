package ckpt

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/internal/par"
)

// populateChunkPages is the fewest pages one thread of Populate maps (1 MiB of 4 KiB pages):
// a q|k tap at 64 patches stays one call, a block output at 5,120 patches (24 MB) is spread
// over every thread of a 16-thread run.
const populateChunkPages = 256

// Populate maps the pages of fresh memory f writable (MADV_POPULATE_WRITE, Linux 5.14+) before
// a copy fills it, where the copy would otherwise fault them in one by one: the whole pages
// inside f (the residency's pageSize and alignUp), in contiguous ranges on up to threads
// threads. One call maps and zeroes its pages on one thread: a block output at 5,120 patches
// took 6-7 ms of a 16-thread block's host work that way (blocks 0 and 1 of a run, whose
// outputs are fresh). Advice only: the pages hold zeros either way, and an error (an older
// kernel) changes nothing.
func Populate(f []float32, threads int) {
	if len(f) == 0 {
		return
	}
	ps := pageSize()
	start := int64(uintptr(unsafe.Pointer(unsafe.SliceData(f))))
	lo, hi := alignUp(start, ps), (start+4*int64(len(f)))/ps*ps
	if hi <= lo {
		return
	}
	base := unsafe.Add(unsafe.Pointer(unsafe.SliceData(f)), lo-start)
	par.RangesOn(int((hi-lo)/ps), populateChunkPages, threads, func(a, b int) {
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, int64(a)*ps)), int64(b-a)*ps), unix.MADV_POPULATE_WRITE)
	})
}
