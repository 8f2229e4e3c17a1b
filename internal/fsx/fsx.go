// Package fsx is how the inspector touches files it is pointed at: inputs are opened only
// when they are regular files (a named pipe, a device or a directory is refused before
// anything blocks on it), small inputs are read within a size bound, and outputs are written
// to a temporary file in the same folder, synced and renamed over the target, never over an
// input and never twice in one command.
//
// Invariant: a failed write (a full disk, an error from the producer, a cancel) leaves the
// target as it was. Mutation that would silently break it: creating the target directly and
// writing into it — a full disk leaves a truncated file where the old one was.
package fsx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// OpenRegular opens path for reading if it is a regular file (symlinks followed). The open
// does not block on a FIFO (O_NONBLOCK), and the type is checked on the opened file itself.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, kind(st.Mode()))
	}
	return f, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadSmall reads a regular file of at most limit bytes (configs, indexes).
func ReadSmall(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte bound for this kind of file", path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past the %d-byte bound while being read", path, limit)
	}
	return data, nil
}

// WriteAtomic writes path through write: into a new temporary file next to it, synced, then
// renamed over path. On any failure the temporary file is removed and path is untouched.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s): not written", path, kind(st.Mode()))
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// ErrSameFile says an output would overwrite an input or another output.
var ErrSameFile = errors.New("the same file")

// CheckOutputs refuses an output that is one of inputs (the same file, by identity, or the
// same path) or that repeats another output. Empty paths are skipped.
func CheckOutputs(inputs, outputs []string) error {
	type named struct {
		path, role string
	}
	var seen []named
	for _, in := range inputs {
		if in != "" {
			seen = append(seen, named{in, "an input"})
		}
	}
	for _, out := range outputs {
		if out == "" {
			continue
		}
		for _, s := range seen {
			if same(out, s.path) {
				return fmt.Errorf("%s: would overwrite %s (%s): %w", out, s.role, s.path, ErrSameFile)
			}
		}
		seen = append(seen, named{out, "another output"})
	}
	return nil
}

// same says whether a and b name one file: the same file on disk, or the same absolute path.
func same(a, b string) bool {
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(sa, sb)
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}
