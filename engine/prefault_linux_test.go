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

// The mapped residency maps block 0's pages from the open and the next block's while a block
// computes: Block(0) returns with every page of block 0 mapped, though nothing here read them;
// block 2's are not all mapped when nothing asked for block 1 (the kernel maps some pages
// around a fault: block 1's may be, from block 0's), and after Block(2) and Block(3) (which
// waits for the prefault Block(2) started) all of block 3's are.
func TestMappedPrefaultsNextBlock(t *testing.T) {
	if os.Getenv("TS_EMULATED") != "" { // qemu-user: madvise is not passed on, and pagemap is qemu's own
		t.Skip("under qemu-user the process's pages are qemu's")
	}
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
	if p, n := count(0); p != n {
		t.Errorf("Block(0): %d of block 0's %d pages mapped; want all (prefaulted from the open)", p, n)
	}
	if p, n := count(2); p == n { // this starts block 3's prefault
		t.Fatalf("block 2's %d pages are mapped before anything read them: the check below could not fail", n)
	}
	if p, n := count(3); p != n {
		t.Errorf("Block(3) after Block(2): %d of block 3's %d pages mapped; want all (prefaulted)", p, n)
	}
}
