// Package fsx is how the inspector touches files it is pointed at: inputs are opened only
// when they are regular files (a named pipe, a device or a directory is refused before
// anything blocks on it), small inputs are read within a size bound, and outputs are checked
// before the work (output.go) and written to a temporary file beside the target, synced and
// renamed over it (atomic.go), never over an input and never twice in one command.
package fsx

import (
	"fmt"
	"io"
	"os"
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
