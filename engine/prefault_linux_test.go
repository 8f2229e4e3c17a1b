package engine_test

import (
	"encoding/binary"
	"os"
	"testing"
	"unsafe"

	"github.com/turbospark/inspector/engine"
)

// pagesPresent counts the pages of b that are mapped into this process now (bit 63 of their
// /proc/self/pagemap entry), and the pages b spans.
func pagesPresent(t *testing.T, b []byte) (present, pages int) {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	var entry [8]byte
	for p := start / ps; p <= (start+uintptr(len(b))-1)/ps; p++ {
		if _, err := f.ReadAt(entry[:], int64(p)*8); err != nil {
			t.Fatal(err)
		}
		pages++
		if binary.LittleEndian.Uint64(entry[:])>>63 == 1 {
			present++
		}
	}
	return present, pages
}

// The mapped residency maps the next block's pages while a block computes: after Block(0) and
// Block(1) (which waits for the prefault that Block(0) started), every page of block 1's
// weights is mapped though nothing here read them, and block 3's (two ahead) are not yet.
func TestMappedPrefaultsNextBlock(t *testing.T) {
	ck, err := engine.OpenCheckpoint(tinyCheckpoint(t))
	must(t, err)
	if ck.Config.Depth < 4 {
		t.Fatalf("the tiny tower has %d blocks; the test needs 4", ck.Config.Depth)
	}
	res, err := engine.NewResidency(ck, engine.Mapped, 2)
	must(t, err)
	defer res.Close()
	count := func(block int) (present, pages int) {
		w, _, err := res.Block(block)
		must(t, err)
		for _, wt := range w {
			if wt.Region != nil {
				p, n := pagesPresent(t, wt.Bytes())
				present, pages = present+p, pages+n
			}
		}
		return present, pages
	}
	// Ask for block 3's views first (this starts block 4's prefault, not 3's): untouched, so unmapped.
	if p, n := count(3); p == n {
		t.Fatalf("block 3's %d pages are mapped before anything read them: the check below could not fail", n)
	}
	count(0)
	if p, n := count(1); p != n {
		t.Errorf("after Block(0) and Block(1), %d of block 1's %d pages are mapped; want all (prefaulted)", p, n)
	}
}
