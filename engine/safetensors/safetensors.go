// Package safetensors reads and writes the safetensors format: an 8-byte little-endian
// header length n, a JSON header of n bytes, then raw little-endian tensor data.
//
// Invariant: a File that Open returns has been checked against the file's real size: every
// tensor's dtype is known, its byte range lies inside the data section, matches its shape,
// and overlaps no other tensor. Callers can then slice a mapping or pread without checks.
// The mutation that would silently break it: trusting data_offsets without comparing them
// with the shape (a short tensor would read its neighbour's bytes).
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/internal/fsx"
)

// MaxHeaderBytes bounds the JSON header: the reference implementation's bound (its
// HeaderTooLarge); real checkpoints have headers well under 10 MB.
const MaxHeaderBytes = 100_000_000

// MaxElems bounds one tensor's element count and each of its dimensions (2^40: 4 TiB of
// F32, past any real tensor and far from int64 overflow, so products of checked counts are
// exact everywhere downstream).
const MaxElems = 1 << 40

// TensorInfo describes one tensor. Begin and End are absolute byte offsets in the file.
type TensorInfo struct {
	Name       string
	DType      dtype.DType
	Shape      []int
	Begin, End int64
}

// Elems is the product of the shape (at most MaxElems in a parsed File).
func (t TensorInfo) Elems() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// File is a parsed header: where every tensor lies in Path.
type File struct {
	Path      string
	Size      int64
	DataStart int64
	Tensors   map[string]TensorInfo
	Metadata  map[string]string
}

// Open reads and checks the header of path; it reads no tensor data.
func Open(path string) (*File, error) {
	f, err := fsx.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Parse(f, st.Size(), path)
}

type rawEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// HeaderLength is the length the file at path declares for its JSON header (its first 8
// bytes), checked as Parse checks it, for a caller that checks what parsing it would hold
// before it opens the file.
func HeaderLength(path string) (int64, error) {
	f, err := fsx.OpenRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	n, err := headerLength(f, st.Size(), path)
	return int64(n), err
}

// headerLength reads and checks the header length of a file of size bytes.
func headerLength(r io.ReaderAt, size int64, path string) (uint64, error) {
	if size < 8 {
		return 0, fmt.Errorf("%s: truncated safetensors file: %d bytes, the header length alone needs 8", path, size)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return 0, fmt.Errorf("%s: reading header length: %v", path, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size-8) {
		return 0, fmt.Errorf("%s: header length %d runs past the end of the file (%d bytes)", path, n, size)
	}
	if n > MaxHeaderBytes {
		return 0, fmt.Errorf("%s: header length %d is over the %d-byte bound", path, n, MaxHeaderBytes)
	}
	return n, nil
}

// Parse reads the header from r, a file of size bytes named path (for messages).
func Parse(r io.ReaderAt, size int64, path string) (*File, error) {
	n, err := headerLength(r, size, path)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("%s: reading header: %v", path, err)
	}
	raw, err := headerEntries(hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid JSON header: %v", path, err)
	}
	f := &File{Path: path, Size: size, DataStart: 8 + int64(n), Tensors: map[string]TensorInfo{}}
	for _, entry := range raw {
		name, msg := entry.name, entry.value
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("%s: __metadata__ is not a map of strings: %v", path, err)
			}
			continue
		}
		t, err := f.parseEntry(name, msg)
		if err != nil {
			return nil, err
		}
		f.Tensors[name] = t
	}
	return f, f.checkOverlaps()
}

type headerEntry struct {
	name  string
	value json.RawMessage
}

// headerEntries reads the header's top-level object in order, refusing a name given twice
// (a plain map would keep the last one silently).
func headerEntries(hdr []byte) ([]headerEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	if tok, err := dec.Token(); err != nil {
		return nil, err
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf("the header is not a JSON object")
	}
	seen := map[string]bool{}
	var out []headerEntry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string) // object keys are strings
		if seen[name] {
			return nil, fmt.Errorf("%q appears twice", name)
		}
		seen[name] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%q: %v", name, err)
		}
		out = append(out, headerEntry{name, v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the header object")
	}
	return out, nil
}

func (f *File) parseEntry(name string, msg json.RawMessage) (TensorInfo, error) {
	var e rawEntry
	if err := json.Unmarshal(msg, &e); err != nil {
		return TensorInfo{}, fmt.Errorf("%s: tensor %q: invalid entry: %v", f.Path, name, err)
	}
	d := dtype.DType(e.DType)
	if d.Size() == 0 {
		return TensorInfo{}, fmt.Errorf("%s: tensor %q: unknown dtype %q", f.Path, name, e.DType)
	}
	t := TensorInfo{Name: name, DType: d, Shape: make([]int, len(e.Shape))}
	elems := int64(1)
	for i, s := range e.Shape {
		if s < 0 {
			return TensorInfo{}, fmt.Errorf("%s: tensor %q: invalid shape %v", f.Path, name, e.Shape)
		}
		if s > MaxElems || (s != 0 && elems > MaxElems/s) { // checked before the multiply: no wrap
			return TensorInfo{}, fmt.Errorf("%s: tensor %q: shape %v has more than %d elements", f.Path, name, e.Shape, int64(MaxElems))
		}
		t.Shape[i] = int(s)
		elems *= s
	}
	if len(e.DataOffsets) != 2 {
		return TensorInfo{}, fmt.Errorf("%s: tensor %q: data_offsets must be [begin, end], got %v", f.Path, name, e.DataOffsets)
	}
	b, en := e.DataOffsets[0], e.DataOffsets[1]
	dataLen := f.Size - f.DataStart
	if b < 0 || en < b || en > dataLen {
		return TensorInfo{}, fmt.Errorf("%s: tensor %q: data offsets [%d, %d] out of bounds (data section is %d bytes)", f.Path, name, b, en, dataLen)
	}
	if want := elems * int64(d.Size()); en-b != want {
		return TensorInfo{}, fmt.Errorf("%s: tensor %q: data offsets [%d, %d] hold %d bytes, shape %v of %s needs %d", f.Path, name, b, en, en-b, t.Shape, d, want)
	}
	t.Begin, t.End = f.DataStart+b, f.DataStart+en
	return t, nil
}

// checkOverlaps refuses two tensors sharing a byte; an empty tensor holds no byte, so it
// may sit at any offset (as the reference reader allows).
func (f *File) checkOverlaps() error {
	var prev *TensorInfo
	for _, t := range f.Sorted() {
		if t.Begin == t.End {
			continue
		}
		if prev != nil && t.Begin < prev.End {
			return fmt.Errorf("%s: tensors %q and %q overlap (bytes %d-%d and %d-%d)", f.Path, prev.Name, t.Name,
				prev.Begin, prev.End, t.Begin, t.End)
		}
		prev = &t
	}
	return nil
}

// Sorted lists the tensors in file order.
func (f *File) Sorted() []TensorInfo {
	ts := make([]TensorInfo, 0, len(f.Tensors))
	for _, t := range f.Tensors {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Begin != ts[j].Begin {
			return ts[i].Begin < ts[j].Begin
		}
		return ts[i].Name < ts[j].Name
	})
	return ts
}

// ReadRaw preads one tensor's bytes.
func (f *File) ReadRaw(name string) ([]byte, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q", f.Path, name)
	}
	fh, err := fsx.OpenRegular(f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	buf := make([]byte, t.End-t.Begin)
	if _, err := fh.ReadAt(buf, t.Begin); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %v", f.Path, name, err)
	}
	return buf, nil
}

// ReadF32 reads a float tensor widened to float32.
func (f *File) ReadF32(name string) ([]float32, error) {
	raw, err := f.ReadRaw(name)
	if err != nil {
		return nil, err
	}
	t := f.Tensors[name]
	if !t.DType.IsFloatWeight() {
		return nil, fmt.Errorf("%s: tensor %q: dtype %s is not a float", f.Path, name, t.DType)
	}
	out := make([]float32, t.Elems())
	dtype.DecodeF32(out, raw, t.DType)
	return out, nil
}

// ReadI64 reads an I64 tensor.
func (f *File) ReadI64(name string) ([]int64, error) {
	raw, err := f.ReadRaw(name)
	if err != nil {
		return nil, err
	}
	if t := f.Tensors[name]; t.DType != dtype.I64 {
		return nil, fmt.Errorf("%s: tensor %q: dtype %s, want I64", f.Path, name, t.DType)
	}
	out := make([]int64, len(raw)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return out, nil
}
