package ckpt

// region.go: the memory the weights are handed out in. A region is one mapping or one
// allocation (a shard's mapped vision span, a pread slot, a widened weight), numbered once in
// the process, whose base lies on a page boundary, at the page size the process really runs
// with.
//
// Invariant: pageSize is os.Getpagesize(), never a constant, and every region has an ID no
// other region of the process had (a backend keeps what it wrapped of a region by its ID).
// Mutation that would silently break it: a hard-coded 4096 — on 4 KiB Linux nothing changes;
// at Apple silicon's 16 KiB pages a mapping's file offset is not a page multiple and the slots
// end mid-page (TestResidencyPageSize under make test-arm64).

import (
	"os"
	"sync/atomic"

	"github.com/turbospark/inspector/engine/backend"
)

var regionIDs atomic.Int64

func newRegion(b []byte, mapped bool) *backend.Region {
	return &backend.Region{ID: int(regionIDs.Add(1)), Bytes: b, Mapped: mapped}
}

func pageSize() int64 { return int64(os.Getpagesize()) }

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
