package metal

// views.go: engine views as kernel operands, with the bounds and overlap checks the CPU
// backend makes, so a wrong view panics here instead of reading stray GPU memory.
//
// Invariant: an operand's byte offset is 4*View.Off into the view's own buffer, and the
// whole extent an op may touch lies inside that buffer. Mutation that would silently break
// it: passing View.Off as the byte offset — every view at offset 0 (most of them) still
// works, and q/k/v, which sit at offsets D and 2D of the qkv rows, read the wrong floats.

import (
	"fmt"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// floatsOf views host bytes (4-byte aligned, from newBuffer) as float32.
func floatsOf(host []byte) []float32 {
	if len(host) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&host[0])), len(host)/4)
}

func metalBuffer(v backend.View, what string) *Buffer {
	mb, ok := v.Buf.(*Buffer)
	if !ok || mb == nil {
		panic(fmt.Sprintf("metal: %s: view of %T, not a metal buffer", what, v.Buf))
	}
	if mb.dev == nil {
		panic(fmt.Sprintf("metal: %s: buffer used after Free", what))
	}
	return mb
}

// checkExtent panics unless elements [Off, Off+n) of v's buffer exist.
func checkExtent(v backend.View, n int, what string) *Buffer {
	mb := metalBuffer(v, what)
	if n < 0 || v.Off < 0 || v.Off+n > len(mb.f) {
		panic(fmt.Sprintf("metal: %s: [%d, %d) outside buffer of %d", what, v.Off, v.Off+n, len(mb.f)))
	}
	return mb
}

// hostSpan returns the host floats [Off, Off+n) of v.
func hostSpan(v backend.View, n int, what string) []float32 {
	mb := checkExtent(v, n, what)
	return mb.f[v.Off : v.Off+n : v.Off+n]
}

// operand returns v as a kernel operand after checking that n elements from Off exist.
func operand(v backend.View, n int, what string) shaders.Operand {
	mb := checkExtent(v, n, what)
	return shaders.Operand{Handle: mb.dev, Offset: 4 * v.Off}
}

// noOverlap panics when an op's output shares memory with an input it reads (backend.Overlaps).
func noOverlap(op string, out backend.View, nOut int, in backend.View, nIn int) {
	if backend.Overlaps(out, nOut, in, nIn) {
		panic(fmt.Sprintf("metal: %s: output [%d,%d) overlaps input [%d,%d)", op, out.Off, out.Off+nOut, in.Off, in.Off+nIn))
	}
}
