// Test helper: a minimal safetensors reader (8-byte LE header length, JSON
// header, data) for the fixtures. Invariant: a tensor is read from
// 8+n+begin, never from begin alone (forgetting the 8+n header offset
// would read header JSON bytes as pixels and fail every parity test).
package imageproc

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"
)

type stTensor struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
	raw     []byte
}

func readSafetensors(t *testing.T, path string) map[string]*stTensor {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(binary.LittleEndian.Uint64(data))
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	out := map[string]*stTensor{}
	for k, v := range hdr {
		if k == "__metadata__" {
			continue
		}
		var ts stTensor
		if err := json.Unmarshal(v, &ts); err != nil {
			t.Fatal(err)
		}
		ts.raw = data[8+n+ts.Offsets[0] : 8+n+ts.Offsets[1]]
		out[k] = &ts
	}
	return out
}

func (ts *stTensor) f32() []float32 {
	v := make([]float32, len(ts.raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(ts.raw[i*4:]))
	}
	return v
}

func (ts *stTensor) i64() []int64 {
	v := make([]int64, len(ts.raw)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(ts.raw[i*8:]))
	}
	return v
}
