// Package dtype is the element types of weights and tensors, spelled as in a safetensors
// header ("F32", "BF16", ...), and the exact conversions between float32 and the 16-bit
// float types. Backends and the file format both use it; it depends on nothing.
//
// Invariant: widening BF16/F16 to float32 is exact, narrowing rounds to nearest even (as
// torch casts). Mutation that would silently break it: narrowing to BF16 by truncating the
// low half — every weight still loads, each one up to one ulp off.
package dtype

import (
	"encoding/binary"
	"math"
)

// DType is a safetensors element type, spelled as in the header ("F32", "BF16", ...).
type DType string

const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	F64  DType = "F64"
	I64  DType = "I64"
	I32  DType = "I32"
	U8   DType = "U8"
)

// Size is the element size in bytes, 0 for a dtype this reader does not know.
func (d DType) Size() int {
	switch d {
	case F32, I32:
		return 4
	case F16, BF16:
		return 2
	case F64, I64:
		return 8
	case U8:
		return 1
	}
	return 0
}

// IsFloatWeight says whether the engine computes with weights of this dtype.
func (d DType) IsFloatWeight() bool { return d == F32 || d == F16 || d == BF16 }

// BF16ToF32 widens a bfloat16 bit pattern: bf16 is the top half of an f32.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 rounds to nearest even, as torch does when casting to bfloat16.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN stays NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// F16ToF32 widens an IEEE half, subnormals included.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = man * 2^-24
		f := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// F32ToF16 rounds to nearest even half; overflow goes to infinity.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	if b&0x7fffffff > 0x7f800000 {
		return sign | 0x7e00
	}
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 { // subnormal half or zero
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - exp)
		half := man >> shift
		rem := man & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is the right rounding
	}
	return sign | uint16(half)
}

// DecodeF32 widens n elements of raw (little-endian, dtype d) into dst[:n].
// It panics on a non-float dtype: callers validate dtypes when they open a file.
func DecodeF32(dst []float32, raw []byte, d DType) {
	n := len(dst)
	switch d {
	case F32:
		for i := 0; i < n; i++ {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case BF16:
		for i := 0; i < n; i++ {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case F16:
		for i := 0; i < n; i++ {
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	default:
		panic("dtype: DecodeF32 of " + string(d))
	}
}

// EncodeF32 narrows src into dtype d, appending to dst.
func EncodeF32(dst []byte, src []float32, d DType) []byte {
	switch d {
	case F32:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	case BF16:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToBF16(v))
		}
	case F16:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(v))
		}
	default:
		panic("dtype: EncodeF32 to " + string(d))
	}
	return dst
}
