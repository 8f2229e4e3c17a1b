// decode.go: widening weights (F32, BF16, F16 little-endian bytes at any alignment) to float32.
//
// Invariant: widening is exact and independent of the address: the aligned fast path and the
// byte-wise path give the same bits (tested with weights at odd byte offsets).
// Mutation that would silently break it: reading the bytes through a *uint16/*uint32 cast
// without the alignment check, or truncating f16 subnormals to zero.
package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// littleEndian says whether the host stores integers as the file does (the fast path's premise).
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// checkWeight panics unless w is a float weight of exactly n elements.
func checkWeight(op string, w backend.Weight, n int) {
	if !w.DType.IsFloatWeight() {
		panic(fmt.Sprintf("cpu: %s: weight %q has dtype %q, want F32, BF16 or F16", op, w.Name, w.DType))
	}
	if w.Region == nil {
		panic(fmt.Sprintf("cpu: %s: weight %q has no region", op, w.Name))
	}
	if w.Elems() != n {
		panic(fmt.Sprintf("cpu: %s: weight %q has %d elements (shape %v), want %d", op, w.Name, w.Elems(), w.Shape, n))
	}
}

// hasWeight says whether an optional weight (a bias) is present: the zero Weight means none.
func hasWeight(w backend.Weight) bool { return w.Region != nil }

// decodeWeight widens elements [start, start+len(dst)) of w into dst.
func decodeWeight(dst []float32, w backend.Weight, start int) {
	size := w.DType.Size()
	off := w.Offset + start*size
	raw := w.Region.Bytes[off : off+len(dst)*size]
	decode(dst, raw, w.DType)
}

// decode widens len(dst) elements of raw (little-endian dtype d) into dst.
func decode(dst []float32, raw []byte, d dtype.DType) {
	n := len(dst)
	if n == 0 {
		return
	}
	aligned := littleEndian && uintptr(unsafe.Pointer(&raw[0]))%uintptr(d.Size()) == 0
	switch d {
	case dtype.F32:
		if aligned {
			copy(dst, unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), n))
			return
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case dtype.BF16:
		if aligned {
			for i, h := range unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), n) {
				dst[i] = math.Float32frombits(uint32(h) << 16)
			}
			return
		}
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case dtype.F16:
		if aligned {
			for i, h := range unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), n) {
				dst[i] = halfToFloat(h)
			}
			return
		}
		for i := range dst {
			dst[i] = halfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	default:
		panic("cpu: decode of dtype " + string(d))
	}
}

// halfToFloat widens an IEEE half exactly. The exponent and mantissa bits, moved into float32
// position, read as a float32 that is 2^112 too small (a subnormal half becomes a subnormal
// float32 with the same mantissa); one exact multiply by 2^112 fixes both cases. Inf and NaN
// (exponent all ones) get the float32 all-ones exponent instead. Same bits as
// dtype.F16ToF32 for all 65536 inputs (tested), without its branches.
func halfToFloat(h uint16) float32 {
	const twoTo112 = 5.192296858534828e+33 // 2^112, exact in float32
	sign := uint32(h&0x8000) << 16
	mag := uint32(h&0x7fff) << 13
	if h&0x7c00 == 0x7c00 {
		return math.Float32frombits(sign | 0x7f800000 | mag&0x7fffff)
	}
	return math.Float32frombits(sign | math.Float32bits(math.Float32frombits(mag)*twoTo112))
}
