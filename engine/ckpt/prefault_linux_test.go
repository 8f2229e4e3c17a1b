package ckpt_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine/ckpt"
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

// skipUnderQemu skips a test of the process's pages under qemu-user (make test-arm64), which
// does not pass madvise on and keeps a pagemap of its own.
func skipUnderQemu(t *testing.T) {
	if os.Getenv("TS_EMULATED") != "" {
		t.Skip("under qemu-user the process's pages are qemu's")
	}
}

// prefault maps every page of the span asked for into the process, on a fresh mapping of a
// file where no page is mapped before (nothing touched it, so the check after could fail: a
// prefault that did nothing leaves all of them unmapped). Which spans the residency asks for,
// and when, is TestMappedPrefaultsWhatRunsNext's: pages cannot tell, since the kernel maps
// pages around a fault (a whole large folio on some filesystems, as on CI's, where block 2 of
// the tiny tower was mapped by block 1's prefault).
func TestPrefaultMapsTheSpan(t *testing.T) {
	skipUnderQemu(t)
	ps := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "weights")
	must(t, os.WriteFile(path, bytes.Repeat([]byte{1}, 64*ps), 0o644))
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, 64*ps, unix.PROT_READ, unix.MAP_SHARED)
	must(t, err)
	defer unix.Munmap(m)
	if p, n := pagesPresent(t, m); p != 0 {
		t.Fatalf("%d of a fresh mapping's %d pages are mapped before anything read them: the check below could not fail", p, n)
	}
	span := m[16*ps : 40*ps+5] // page-aligned start, as pageSpan gives; a part of its last page
	ckpt.PrefaultPages(span)
	if p, n := pagesPresent(t, span); p != n {
		t.Errorf("after the prefault %d of the span's %d pages are mapped; want all", p, n)
	}
}

// populate maps every page wholly inside the floats it is given (fresh anonymous memory,
// where none is mapped before: a no-op populate fails it), on one thread or spread over
// several (each range its own call: a split that lost a range, or a page at a range's edge,
// fails it), and leaves values as they were.
func TestPopulateMapsFreshMemory(t *testing.T) {
	skipUnderQemu(t)
	ps := os.Getpagesize()
	for _, tc := range []struct{ pages, threads int }{{64, 1}, {64, 4}, {4096 + 3, 3}, {4096 + 7, 16}} {
		m, err := unix.Mmap(-1, 0, tc.pages*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		must(t, err)
		if p, n := pagesPresent(t, m); p != 0 {
			t.Fatalf("%d of fresh memory's %d pages are mapped before anything wrote them: the check below could not fail", p, n)
		}
		f := unsafe.Slice((*float32)(unsafe.Pointer(&m[0])), tc.pages*ps/4)[3 : tc.pages*ps/4-5] // neither end on a page boundary
		ckpt.Populate(f, tc.threads)
		if p, n := pagesPresent(t, m[ps:(tc.pages-1)*ps]); p != n {
			t.Errorf("%d pages, %d threads: after populate %d of the %d pages wholly inside are mapped; want all", tc.pages, tc.threads, p, n)
		}
		must(t, unix.Munmap(m))
	}
	vals := []float32{1.5, -2, 3.25, 7}
	g := append(make([]float32, 0, 1<<20), vals...)
	ckpt.Populate(g[:cap(g)], 4)
	if !slices.Equal(g[:4], vals) {
		t.Errorf("populate changed values: %v, want %v", g[:4], vals)
	}
}
