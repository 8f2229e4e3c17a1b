//go:build linux && amd64

package kernel

import (
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"
)

// TestTransposeReadsNothingPast: the source's last element ends where a PROT_NONE page begins,
// so a read past the last row or past the last column faults (a panic here, which fails the
// test): short blocks of rows and of columns, Transpose and DivTranspose, and the FMA panel
// packers' last k.
func TestTransposeReadsNothingPast(t *testing.T) {
	if !HasAVX512 {
		t.Skip("no AVX-512")
	}
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 64*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[63*page:], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	floats := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 63*page/4)
	ending := func(n int) []float32 { return floats[len(floats)-n:] } // n floats ending at the guard
	for _, sh := range [][3]int{{3, 5, 7}, {17, 72, 80}, {35, 9, 11}, {16, 16, 16}, {1, 1, 1}} {
		rows, cols, lds := sh[0], sh[1], sh[2]
		src := ending((rows-1)*lds + cols)
		dst := make([]float32, cols*rows)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Transpose %v read past its source: %v", sh, r)
				}
			}()
			Transpose(unsafe.Pointer(&dst[0]), rows, unsafe.Pointer(&src[0]), lds, rows, cols)
		}()
	}
	for _, sh := range [][2]int{{38, 1101}, {16, 40}, {5, 11}} { // the panel packers: k pairs (or k), row length in elements
		count, rowLen := sh[0], sh[1]
		for _, pack := range []struct {
			name string
			size int // bytes an element
			f    func(dst *float32, src unsafe.Pointer, rowBytes int, count int)
			per  int // k a counted unit
		}{{"PackBF16x32", 2, PackBF16x32, 2}, {"PackF16x32", 2, PackF16x32, 2}} {
			rowBytes := rowLen * pack.size
			need := 31*rowBytes + count*pack.per*pack.size // row 31's last byte read ends at the guard
			src := unsafe.Pointer(&mem[63*page-need])
			dst := make([]float32, 32*count*pack.per)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s %v read past its rows: %v", pack.name, sh, r)
					}
				}()
				pack.f(&dst[0], src, rowBytes, count)
			}()
		}
	}
	for _, sh := range [][2]int{{7, 9}, {32, 72}, {17, 33}} {
		n, hd := sh[0], sh[1]
		ob := ending((hd-1)*32 + n) // O^T rows of 32, the last one read up to column n
		var sum [32]float64
		out := make([]float32, n*hd)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("DivTranspose %v read past its source: %v", sh, r)
				}
			}()
			DivTranspose(&out[0], hd, &ob[0], &sum[0], n, hd)
		}()
	}
}
