//go:build linux || darwin

package metal

// alloc_test.go: Alloc takes the device's word that a new buffer is zeroed (Metal's
// newBufferWithLength: "Creates a buffer the method clears with zero values") and does not
// clear it again: at 65,536 patches the activations are GBs, and a memset of each at every
// Alloc is time for nothing.

import (
	"runtime/debug"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine/backend"
)

// readOnlyGPU hands out new buffers as read-only zero pages: any write by the host faults.
type readOnlyGPU struct {
	gpu
	maps [][]byte
}

func (g *readOnlyGPU) newBuffer(n int) (devBuffer, []byte, error) {
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	g.maps = append(g.maps, mem)
	return &modelBuf{n}, mem, nil
}

func TestAllocDoesNotClearDeviceMemory(t *testing.T) {
	b, _ := NewModel(slowestGPU)
	ro := &readOnlyGPU{gpu: b.dev}
	b.dev = ro
	defer func() {
		b.Close()
		for _, m := range ro.maps {
			unix.Munmap(m)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	const n = 1 << 20 // 4 MiB
	var buf backend.Buffer
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Alloc wrote the buffer the device gave it zeroed (a memset of every activation): %v", r)
			}
		}()
		var err error
		if buf, err = b.Alloc(n); err != nil {
			t.Fatal(err)
		}
	}()
	got := make([]float32, n)
	got[n-1] = 1
	b.Download(got, backend.View{Buf: buf})
	for i, v := range got {
		if v != 0 {
			t.Fatalf("element %d of a new buffer is %g", i, v)
		}
	}
	b.Free(buf)
}
