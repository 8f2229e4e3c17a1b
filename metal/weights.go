package metal

// weights.go: binding weights where they lie. A Region (a mapped shard span, or a pread
// slot) is wrapped once as a no-copy buffer, keyed by Region.ID, and each weight is bound
// at its own byte offset. A weight the GPU cannot bind in place is copied: once, when its
// region is a read-only mapping (its bytes never change), or for the open pass only, when
// it is a slot (the ring refills slots; the engine calls Done only after Commit returned).
//
// Invariant: a copy of slot bytes is never reused across passes, and a wrapper is reused
// only for the same memory (ID, base address and length all match). Mutation that would
// silently break it: caching copies of slot weights by (region, offset) — block i+2, read
// into the same slot at the same offsets, would run with block i's weights.

import (
	"fmt"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/shaders"
)

// placement says how a weight reaches the GPU.
type placement int

const (
	boundInPlace  placement = iota // the region's no-copy buffer at the weight's offset
	copiedOnce                     // a buffer of its own, kept (mapped bytes never change)
	copiedPerPass                  // a buffer for the open pass only (slots are refilled)
)

func (p placement) String() string {
	return [...]string{"bound in place", "copied once", "copied per pass"}[p]
}

// placementOf decides, given whether the weight's region could be wrapped. Metal binds a
// buffer at an offset that is a multiple of the element the kernel reads through it: 4 bytes
// for F32 weights, 2 for BF16 and F16. Safetensors data is 8-aligned in files written by
// the usual tools and pread slots align every weight to 256 bytes, so copies are the
// exception: an F32 tensor at an offset that is not a multiple of 4, or a 16-bit one at an
// odd offset, or a region that is not page-aligned host memory (or exceeds the device's
// maximum buffer length).
func placementOf(w backend.Weight, regionWrapped bool) placement {
	if regionWrapped && w.Offset%w.DType.Size() == 0 {
		return boundInPlace
	}
	if w.Region.Mapped {
		return copiedOnce
	}
	return copiedPerPass
}

type regionWrap struct {
	dev  devBuffer // nil when the region could not be wrapped
	base uintptr
	n    int
}

type copyKey struct{ region, offset, n int }

type weightCache struct {
	be      *Backend
	regions map[int]*regionWrap
	copies  map[copyKey]devBuffer
	wraps   int // regions wrapped so far (tests count them)
	copied  int // weight copies made so far
	// regions that could not be wrapped (their weights are copied), and the last reason
	unwrapped   int
	lastWrapErr error
}

// Binding is how a backend's weights reached the GPU so far (selftest prints it per tower).
type Binding struct {
	PageSize       int    `json:"page_size"`
	RegionsWrapped int    `json:"regions_wrapped"`   // no-copy buffers over the weights' memory
	Unwrapped      int    `json:"regions_unwrapped"` // regions whose weights were copied instead
	WeightsCopied  int    `json:"weights_copied"`
	LastWrapError  string `json:"last_wrap_error,omitempty"`
}

// Binding says how the weights were bound so far.
func (b *Backend) Binding() Binding {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := &b.weights
	out := Binding{PageSize: b.pageSize, RegionsWrapped: c.wraps, Unwrapped: c.unwrapped, WeightsCopied: c.copied}
	if c.lastWrapErr != nil {
		out.LastWrapError = c.lastWrapErr.Error()
	}
	return out
}

func newWeightCache(be *Backend) weightCache {
	return weightCache{be: be, regions: map[int]*regionWrap{}, copies: map[copyKey]devBuffer{}}
}

func baseOf(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// region returns the wrapper of r, wrapping it the first time (or when its memory changed).
func (c *weightCache) region(r *backend.Region) *regionWrap {
	base := baseOf(r.Bytes)
	if w, ok := c.regions[r.ID]; ok && w.base == base && w.n == len(r.Bytes) {
		return w
	} else if ok && w.dev != nil {
		c.be.retire(w.dev)
	}
	w := &regionWrap{base: base, n: len(r.Bytes)}
	switch {
	case base == 0:
	case base%uintptr(c.be.pageSize) != 0:
		c.unwrapped++
		c.lastWrapErr = fmt.Errorf("region %d at %#x is not on a %d-byte page boundary", r.ID, base, c.be.pageSize)
	default:
		if dev, err := c.be.dev.wrap(r.Bytes, c.be.pageSize); err == nil {
			w.dev = dev
			c.wraps++
		} else {
			c.unwrapped++
			c.lastWrapErr = fmt.Errorf("region %d (%d bytes): %w", r.ID, len(r.Bytes), err)
		}
	}
	c.regions[r.ID] = w
	return w
}

// checkWeight panics unless w is a float weight of n elements inside its region.
func checkWeight(op string, w backend.Weight, n int) shaders.DType {
	dt, err := shaders.DTypeOf(w.DType)
	if err != nil {
		panic(fmt.Sprintf("metal: %s: weight %q: %v", op, w.Name, err))
	}
	if w.Region == nil {
		panic(fmt.Sprintf("metal: %s: weight %q has no region", op, w.Name))
	}
	if w.Elems() != n {
		panic(fmt.Sprintf("metal: %s: weight %q has %d elements (shape %v), want %d", op, w.Name, w.Elems(), w.Shape, n))
	}
	if end := w.Offset + n*w.DType.Size(); w.Offset < 0 || end > len(w.Region.Bytes) {
		panic(fmt.Sprintf("metal: %s: weight %q bytes [%d,%d) outside its region of %d", op, w.Name, w.Offset, end, len(w.Region.Bytes)))
	}
	return dt
}

// operand binds weight w of n elements; ok is false when a copy could not be allocated
// (the error is kept for the next Commit and the op is skipped).
func (c *weightCache) operand(op string, w backend.Weight, n int) (o shaders.Operand, dt shaders.DType, ok bool) {
	dt = checkWeight(op, w, n)
	rw := c.region(w.Region)
	switch placementOf(w, rw.dev != nil) {
	case boundInPlace:
		return shaders.Operand{Handle: rw.dev, Offset: w.Offset}, dt, true
	case copiedOnce:
		key := copyKey{w.Region.ID, w.Offset, len(w.Bytes())}
		if dev, hit := c.copies[key]; hit {
			return shaders.Operand{Handle: dev}, dt, true
		}
		dev, ok := c.copy(op, w)
		if ok {
			c.copies[key] = dev
		}
		return shaders.Operand{Handle: dev}, dt, ok
	default:
		dev, ok := c.copy(op, w)
		if ok {
			c.be.passTemp = append(c.be.passTemp, dev)
		}
		return shaders.Operand{Handle: dev}, dt, ok
	}
}

func (c *weightCache) copy(op string, w backend.Weight) (devBuffer, bool) {
	raw := w.Bytes()
	dev, host, err := c.be.dev.newBuffer(max(len(raw), 4))
	if err != nil {
		if c.be.err == nil {
			c.be.err = fmt.Errorf("metal: %s: copying weight %q: %v", op, w.Name, err)
		}
		return nil, false
	}
	copy(host, raw)
	c.copied++
	return dev, true
}

// releaseAll drops every wrapper and kept copy (no pass may be pending).
func (c *weightCache) releaseAll() {
	for id, w := range c.regions {
		if w.dev != nil {
			c.be.dev.release(w.dev)
		}
		delete(c.regions, id)
	}
	for k, dev := range c.copies {
		c.be.dev.release(dev)
		delete(c.copies, k)
	}
}
