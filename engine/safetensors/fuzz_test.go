package safetensors

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"testing"
)

// Parse never panics, and a File it accepts has every tensor inside the data section,
// sized by its shape, and no two tensors overlapping.
func FuzzParse(f *testing.F) {
	hdr := func(js string) []byte {
		return append(binary.LittleEndian.AppendUint64(nil, uint64(len(js))), js...)
	}
	f.Add(hdr(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`+"\x00\x00\x00\x00\x00\x00\x00\x00"), int64(0))
	f.Add(hdr(`{"__metadata__":{"k":"v"},"b":{"dtype":"BF16","shape":[1,3],"data_offsets":[0,6]}}`+"123456"), int64(0))
	f.Add(hdr(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`), int64(16))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255}, int64(0))
	f.Add(hdr(`{"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}}`), int64(0)) // wraps int64
	f.Fuzz(func(t *testing.T, data []byte, extra int64) {
		size := int64(len(data)) + extra%1024
		if size < int64(len(data)) {
			size = int64(len(data))
		}
		file, err := Parse(bytes.NewReader(append(data, make([]byte, size-int64(len(data)))...)), size, "fuzz.safetensors")
		if err != nil {
			return
		}
		for _, ti := range file.Tensors {
			elems := new(big.Int).SetInt64(1) // the true count, whatever int64 would make of it
			for _, d := range ti.Shape {
				elems.Mul(elems, big.NewInt(int64(d)))
			}
			if !elems.IsInt64() || elems.Int64() > MaxElems || elems.Int64() != ti.Elems() {
				t.Fatalf("accepted %q of shape %v: %s elements", ti.Name, ti.Shape, elems)
			}
			if ti.Begin < file.DataStart || ti.End > file.Size || ti.End-ti.Begin != ti.Elems()*int64(ti.DType.Size()) {
				t.Fatalf("accepted %q at [%d,%d) in a %d-byte file (data from %d)", ti.Name, ti.Begin, ti.End, file.Size, file.DataStart)
			}
		}
		var prev *TensorInfo
		for _, ti := range file.Sorted() {
			if ti.Begin == ti.End {
				continue // an empty tensor holds no byte
			}
			if prev != nil && ti.Begin < prev.End {
				t.Fatalf("accepted overlapping %q and %q", prev.Name, ti.Name)
			}
			prev = &ti
		}
	})
}
