//go:build !linux

package ckpt

import "golang.org/x/sys/unix"

// prefault asks for the pages of b (a read-only file mapping) ahead of their use: macOS has no
// populate advice, so MADV_WILLNEED's read-ahead brings them into memory (their mapping is
// then a cheap fault). Advice only: an error changes nothing.
func prefault(b []byte) { unix.Madvise(b, unix.MADV_WILLNEED) }
