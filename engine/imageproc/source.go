// This file keeps one invariant: what the decoders are given is random access
// to an image's first bytes, never a copy of the whole input. A file is read
// in place (ReadAt), so nothing of it is held beyond the decoders' own
// buffers; a stream is kept in memory only as far as a read has asked for
// (rounded up to a 64 KiB chunk) and never past the span allowed to it.
// Mutation that would silently break it: filling a streamSource with
// io.ReadAll, or growing it to its whole allowance at the first read, makes
// Decode of a stream of junk hold the whole bound again
// (TestDecodeStreamReadsOnlyWhatItNeeds sees hundreds of MB allocated).
package imageproc

import (
	"errors"
	"io"
)

// byteSource is random access to an image's encoded bytes from their start.
type byteSource interface {
	io.ReaderAt
	// upTo says that from now on no read reaches past the first n bytes and
	// returns how many of them there are at most (a file's size, when smaller).
	upTo(n int64) int64
	// allowed is the span last allowed by upTo.
	allowed() int64
	// cut says whether bytes past the span last allowed by upTo exist or may
	// exist, i.e. whether a decoder saw a prefix rather than the whole input.
	cut() bool
}

// fileSource reads a file of a known size in place.
type fileSource struct {
	f    io.ReaderAt
	size int64
	span int64
}

func (s *fileSource) ReadAt(p []byte, off int64) (int, error) { return s.f.ReadAt(p, off) }

func (s *fileSource) upTo(n int64) int64 {
	s.span = min(n, s.size)
	return s.span
}

func (s *fileSource) allowed() int64 { return s.span }

func (s *fileSource) cut() bool { return s.size > s.span }

// streamChunk is how far past a requested end a stream is read ahead.
const streamChunk = 64 << 10

// streamSource keeps what it has read of a stream, as far as asked and at
// most max bytes.
type streamSource struct {
	r   io.Reader
	buf []byte
	max int64
	err error // the stream's first error (io.EOF at its end)
}

func (s *streamSource) upTo(n int64) int64 {
	s.max = n
	return n
}

func (s *streamSource) allowed() int64 { return s.max }

func (s *streamSource) cut() bool { return s.err == nil && int64(len(s.buf)) >= s.max }

func (s *streamSource) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	end := min(off+int64(len(p)), s.max)
	for int64(len(s.buf)) < end && s.err == nil {
		s.fill(end)
	}
	if off >= int64(len(s.buf)) {
		return 0, s.readErr()
	}
	n := copy(p, s.buf[off:])
	if n < len(p) {
		return n, s.readErr()
	}
	return n, nil
}

func (s *streamSource) readErr() error {
	if s.err != nil && s.err != io.EOF {
		return s.err
	}
	return io.EOF
}

// fill reads at least one more byte of the stream towards end (end <= max).
func (s *streamSource) fill(end int64) {
	want := min(max(end, int64(len(s.buf))+streamChunk), s.max)
	if int64(cap(s.buf)) < want {
		grown := make([]byte, len(s.buf), min(max(want, 2*int64(cap(s.buf))), s.max))
		copy(grown, s.buf)
		s.buf = grown
	}
	for range 100 { // like bufio: a reader may return nothing a few times
		n, err := s.r.Read(s.buf[len(s.buf):want])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.err = err
		}
		if n > 0 || err != nil {
			return
		}
	}
	s.err = io.ErrNoProgress
}
