// hugealloc_linux.go: the pack cache's memory, asked for in 2 MiB pages.
//
// The cache holds ~56 MB for the 8B (fc1, fc2, then qkv); as Go heap memory its first write
// faulted in 14,000 4 KiB pages and made block 0 three to five times slower than the others,
// and reading 20 MB of panels through 4 KiB pages misses the TLB. Anonymous memory with
// MADV_HUGEPAGE takes 2 MiB pages where the kernel has them (transparent_hugepage "madvise"
// or "always"), plain pages otherwise: the advice can fail and nothing depends on it.
package cpu

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeAlloc returns n zeroed float32 and whether they are a mapping of their own (outside
// the Go heap, to be released by hugeFree) or, when the mapping fails, a heap slice.
func hugeAlloc(n int) ([]float32, bool) {
	mem, err := unix.Mmap(-1, 0, 4*max(n, 1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return make([]float32, n), false
	}
	unix.Madvise(mem, unix.MADV_HUGEPAGE) // advice: 4 KiB pages if it is refused
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), max(n, 1))[:n], true
}

// hugeFree releases a mapping hugeAlloc made. Never a heap slice (mapped false): unmapping
// its range would take memory from under the Go heap.
func hugeFree(f []float32, mapped bool) {
	if !mapped || cap(f) == 0 {
		return
	}
	unix.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*cap(f)))
}
