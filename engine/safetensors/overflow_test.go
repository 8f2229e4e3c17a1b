package safetensors

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func hdrFile(js string, data int) []byte {
	b := append(binary.LittleEndian.AppendUint64(nil, uint64(len(js))), js...)
	return append(b, make([]byte, data)...)
}

// A shape whose element count passes int64 is refused, whatever the order of its dims.
func TestShapeOverflowRefused(t *testing.T) {
	for _, shape := range []string{"[1099511627776,1099511627776,1099511627776]", "[4294967296,4294967296,16]", "[3037000500,3037000500]"} {
		b := hdrFile(`{"w":{"dtype":"F32","shape":`+shape+`,"data_offsets":[0,0]}}`, 0)
		_, err := Parse(bytes.NewReader(b), int64(len(b)), "big.safetensors")
		if err == nil || !strings.Contains(err.Error(), `"w"`) || !strings.Contains(err.Error(), "big.safetensors") {
			t.Errorf("shape %s: %v (want an error naming the file and the tensor)", shape, err)
		}
	}
}

// A name given twice is refused (a map would keep the last one); an empty tensor may share
// an offset with another.
func TestDuplicatesAndEmptyTensors(t *testing.T) {
	dup := hdrFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8)
	if _, err := Parse(bytes.NewReader(dup), int64(len(dup)), "dup.safetensors"); err == nil || !strings.Contains(err.Error(), `"w" appears twice`) {
		t.Errorf("duplicate names: %v", err)
	}
	empty := hdrFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]}}`, 8)
	f, err := Parse(bytes.NewReader(empty), int64(len(empty)), "empty.safetensors")
	if err != nil || len(f.Tensors) != 2 {
		t.Errorf("an empty tensor inside another's range: %v", err)
	}
	over := hdrFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8)
	if _, err := Parse(bytes.NewReader(over), int64(len(over)), "over.safetensors"); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping tensors: %v", err)
	}
}
