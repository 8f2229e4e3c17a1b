package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/internal/fsx"
)

// Spec declares a tensor before its bytes are written.
type Spec struct {
	Name  string
	DType dtype.DType
	Shape []int
}

func (s Spec) bytes() int64 {
	n := int64(s.DType.Size())
	for _, d := range s.Shape {
		n *= int64(d)
	}
	return n
}

// Writer streams a safetensors file: the header first (all specs known up front), then each
// tensor's bytes in declaration order. Tensors are packed without holes, as the reference
// reader requires, and the header is space-padded so data starts 8-byte aligned. The bytes
// go through fsx's atomic writer (a temporary file next to path, synced and renamed over
// path) by a Close that found every tensor written: a failure (a full disk, a missing
// tensor) leaves path as it was.
type Writer struct {
	path  string
	f     *fsx.Atomic
	w     *bufio.Writer
	specs []Spec
	next  int
	err   error
}

// Create writes the header of a new file at path.
func Create(path string, specs []Spec, metadata map[string]string) (*Writer, error) {
	hdr := map[string]any{}
	if len(metadata) > 0 {
		hdr["__metadata__"] = metadata
	}
	var off int64
	for _, s := range specs {
		if s.DType.Size() == 0 {
			return nil, fmt.Errorf("%s: tensor %q: unknown dtype %q", path, s.Name, s.DType)
		}
		n := s.bytes()
		hdr[s.Name] = map[string]any{"dtype": s.DType, "shape": s.Shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return nil, err
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	f, err := fsx.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20), specs: specs}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(js)))
	w.w.Write(lenBuf[:])
	w.w.Write(js)
	return w, nil
}

// Write appends the bytes of the next declared tensor.
func (w *Writer) Write(name string, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.next >= len(w.specs) || w.specs[w.next].Name != name {
		w.err = fmt.Errorf("%s: tensor %q written out of declaration order", w.path, name)
		return w.err
	}
	if int64(len(data)) != w.specs[w.next].bytes() {
		w.err = fmt.Errorf("%s: tensor %q: %d bytes, its spec needs %d", w.path, name, len(data), w.specs[w.next].bytes())
		return w.err
	}
	w.next++
	_, w.err = w.w.Write(data)
	return w.err
}

// WriteF32 encodes float32 values into the tensor's declared dtype.
func (w *Writer) WriteF32(name string, v []float32) error {
	if w.next < len(w.specs) {
		return w.Write(name, dtype.EncodeF32(nil, v, w.specs[w.next].DType))
	}
	return w.Write(name, nil)
}

// Close flushes, syncs and renames the file into place; it fails, leaving path as it was, if
// a declared tensor was never written or a write failed.
func (w *Writer) Close() error {
	if w.err == nil && w.next != len(w.specs) {
		w.err = fmt.Errorf("%s: %d of %d tensors written", w.path, w.next, len(w.specs))
	}
	if err := w.w.Flush(); w.err == nil && err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
	}
	if w.err != nil {
		w.f.Abort()
		return fmt.Errorf("%w (the file was not changed)", w.err)
	}
	return w.f.Commit()
}

// Tensor is an in-memory tensor for WriteFile.
type Tensor struct {
	Spec
	Data []byte
}

// F32Tensor builds an F32 tensor.
func F32Tensor(name string, shape []int, v []float32) Tensor {
	return Tensor{Spec{name, dtype.F32, shape}, dtype.EncodeF32(nil, v, dtype.F32)}
}

// I64Tensor builds an I64 tensor.
func I64Tensor(name string, shape []int, v []int64) Tensor {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return Tensor{Spec{name, dtype.I64, shape}, b}
}

// WriteFile writes a whole file from memory.
func WriteFile(path string, ts []Tensor, metadata map[string]string) error {
	specs := make([]Spec, len(ts))
	for i, t := range ts {
		specs[i] = t.Spec
	}
	w, err := Create(path, specs, metadata)
	if err != nil {
		return err
	}
	for _, t := range ts {
		w.Write(t.Name, t.Data)
	}
	return w.Close()
}
