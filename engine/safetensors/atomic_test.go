package safetensors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
)

// A write that fails (here: a declared tensor never written) leaves the old file as it was
// and nothing else in the folder; a good one replaces it.
func TestWriterIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.safetensors")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(path, []byte("the old dump"), 0o644))
	specs := []Spec{{Name: "a", DType: dtype.F32, Shape: []int{2}}, {Name: "b", DType: dtype.F32, Shape: []int{1}}}
	w, err := Create(path, specs, nil)
	must(err)
	must(w.WriteF32("a", []float32{1, 2}))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "not changed") {
		t.Errorf("Close with a tensor missing: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "the old dump" {
		t.Errorf("the old file became %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	must(WriteFile(path, []Tensor{F32Tensor("a", []int{2}, []float32{1, 2})}, nil))
	f, err := Open(path)
	must(err)
	if v, err := f.ReadF32("a"); err != nil || v[1] != 2 {
		t.Errorf("the new file: %v %v", v, err)
	}
}
