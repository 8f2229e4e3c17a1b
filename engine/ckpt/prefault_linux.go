package ckpt

import "golang.org/x/sys/unix"

// prefault maps the pages of b (a read-only file mapping) into the process ahead of their use:
// one MADV_POPULATE_READ (Linux 5.14 and later) does in a single pass what would otherwise be a
// page fault per few pages in the first op that reads them, from every worker thread at once;
// older kernels get MADV_WILLNEED's read-ahead instead. Advice only: an error (a file that
// shrank under its mapping, say) changes nothing, and the op that reads the page then faults
// as it would have, where the engine names the file.
func prefault(b []byte) {
	if unix.Madvise(b, unix.MADV_POPULATE_READ) != nil {
		unix.Madvise(b, unix.MADV_WILLNEED)
	}
}
