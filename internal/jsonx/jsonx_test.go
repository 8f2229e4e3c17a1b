package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	A float64 `json:"a"`
	B []int   `json:"b,omitempty"`
}

type Embedded struct {
	E1 string
	E2 float32 `json:"e2,omitempty"`
}

type level string

func (l level) MarshalText() ([]byte, error) { return []byte("L-" + string(l)), nil }

type custom struct{ x int }

func (c custom) MarshalJSON() ([]byte, error) {
	return []byte(`{"custom":` + string(rune('0'+c.x)) + `}`), nil
}

type sample struct {
	Embedded
	Name     string             `json:"name"`
	Skip     string             `json:"-"`
	Empty    string             `json:"empty,omitempty"`
	Count    int                `json:"count,string"`
	Rate     float64            `json:"rate"`
	Small    float32            `json:"small"`
	Ptr      *inner             `json:"ptr"`
	NilPtr   *inner             `json:"nil_ptr"`
	OmitPtr  *inner             `json:"omit_ptr,omitempty"`
	List     []inner            `json:"list"`
	NilList  []float64          `json:"nil_list"`
	Arr      [3]float64         `json:"arr"`
	Bytes    []byte             `json:"bytes"`
	ByName   map[string]float64 `json:"by_name"`
	ByInt    map[int]string     `json:"by_int"`
	ByLevel  map[level]int      `json:"by_level"`
	Any      any                `json:"any"`
	Took     time.Duration      `json:"took"`
	When     time.Time          `json:"when"`
	Addr     netip.Addr         `json:"addr"`
	Custom   custom             `json:"custom"`
	Raw      json.RawMessage    `json:"raw"`
	Level    level              `json:"level"`
	unexport int
	NoTag    bool
}

func filled() sample {
	return sample{Embedded: Embedded{E1: "e", E2: 1.5}, Name: "x<y>&", Count: 7, Rate: 1.0 / 3, Small: 0.1, Ptr: &inner{A: 2, B: []int{1}},
		List: []inner{{A: 1e-300}, {A: -0.0}}, Arr: [3]float64{1, 2, 3}, Bytes: []byte("hi"), ByName: map[string]float64{"z": 1, "a": 2},
		ByInt: map[int]string{10: "ten", 2: "two"}, ByLevel: map[level]int{"hi": 1}, Any: map[string]any{"k": []any{1.5, "s"}},
		Took: 3 * time.Second, When: time.Date(2026, 12, 7, 1, 2, 3, 4, time.UTC), Addr: netip.MustParseAddr("10.0.0.1"),
		Custom: custom{3}, Raw: json.RawMessage(`{"r":1}`), Level: "lo", unexport: 5, NoTag: true}
}

// With every number finite, the tree writes what encoding/json writes, byte for byte.
func TestSameAsEncodingJSON(t *testing.T) {
	for _, v := range []any{filled(), &[]sample{filled(), {}}, map[string]sample{"a": filled()}, nil, 3.5, []float32{1, 2}} {
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		tree, err := finite(reflect.ValueOf(v))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.MarshalIndent(tree, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the tree of %T writes\n%s\nencoding/json writes\n%s", v, got, want)
		}
	}
}

// Non-finite numbers are null wherever they are: fields, pointers, slices, arrays, maps, any.
func TestNonFiniteIsNull(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	s := filled()
	s.Rate, s.Small, s.Ptr.A = nan, float32(inf), -inf
	s.List[1].A, s.Arr[2], s.ByName["z"] = nan, inf, nan
	s.Any = []any{nan, map[string]any{"i": inf}}
	s.E2 = float32(nan)
	b, err := MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	for _, want := range []string{`"rate": null`, `"small": null`, `"a": null`, `"e2": null`, `"z": null`, "null\n ]"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "NaN") || strings.Contains(string(b), "Inf") {
		t.Errorf("a non-finite number got through:\n%s", b)
	}
	compact, err := Marshal(s)
	if err != nil || bytes.Contains(compact, []byte("\n")) {
		t.Errorf("Marshal: %v\n%s", err, compact)
	}
}
