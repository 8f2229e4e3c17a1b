package fsx

// atomic.go: every output is written to a temporary file beside its target, synced and
// renamed over it. The temporary has a short name of its own (a long target name still fits
// the file system once the suffix is added); the file keeps the target's permissions and,
// where the user may, its owner; a symlink is written through (the link stays, the file it
// names is replaced); a read-only target is refused. Every temporary alive is known, so an
// exit on a signal removes it (RemoveTemporaries).
//
// Invariant: a failed or interrupted write (a full disk, an error from the producer, a
// signal) leaves the target as it was and no temporary behind. Mutation that would silently
// break it: creating the target directly and writing into it — a full disk leaves a
// truncated file where the old one was.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unicode/utf8"
)

// Atomic is an output being written; Commit puts it in place, Abort drops it.
type Atomic struct {
	path     string // as the caller named it: errors say it
	target   string // symlinks resolved: the file that is replaced
	f        *os.File
	mode     os.FileMode
	uid, gid int // the old file's owner, -1 for a new file
	err      error
}

// Create starts writing path: nothing at path changes until Commit. An existing path must
// be a regular file (a symlink to one is followed) that is not read-only.
func Create(path string) (*Atomic, error) {
	target, err := resolved(path)
	if err != nil {
		return nil, err
	}
	if err := writableTarget(path, target); err != nil {
		return nil, err
	}
	a := &Atomic{path: path, target: target, mode: 0o644, uid: -1, gid: -1}
	if st, err := os.Stat(target); err == nil {
		a.mode = st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			a.uid, a.gid = int(sys.Uid), int(sys.Gid)
		}
	}
	dir := filepath.Dir(target)
	if a.f, err = os.CreateTemp(dir, tempPattern(filepath.Base(target))); err != nil {
		return nil, fmt.Errorf("%s: cannot write in %s: %w", path, dir, unwrapPath(err))
	}
	temporaries.add(a.f.Name())
	return a, nil
}

// tempPattern is the temporary's name: a dot, at most 24 bytes of the target's name (whole
// characters), ".tmp-" and CreateTemp's random digits: at most 40 bytes whatever the name.
func tempPattern(base string) string {
	const keep = 24
	if len(base) > keep {
		cut := keep
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return "." + base + ".tmp-*"
}

// Write writes to the temporary; after a failed write every later one fails the same way.
func (a *Atomic) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.f.Write(p)
	a.err = err
	return n, err
}

// Commit syncs the temporary and renames it over the target, with the target's old mode
// and owner; on any failure the target is as it was and the temporary is gone.
func (a *Atomic) Commit() error {
	defer temporaries.remove(a.f.Name())
	err := a.err
	if err == nil {
		err = a.f.Chmod(a.mode)
	}
	if err == nil && a.uid >= 0 {
		if st, e := a.f.Stat(); e == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != a.uid || int(sys.Gid) != a.gid) {
				a.f.Chown(a.uid, a.gid) // as the owner allows: root keeps a user's file theirs
			}
		}
	}
	if err == nil {
		err = a.f.Sync()
	}
	if e := a.f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.target)
	}
	if err != nil {
		os.Remove(a.f.Name())
		return fmt.Errorf("%s: %w (the file was not changed)", a.path, unwrapPath(err))
	}
	return nil
}

// Abort drops the temporary; the target is as it was.
func (a *Atomic) Abort() {
	a.f.Close()
	os.Remove(a.f.Name())
	temporaries.remove(a.f.Name())
}

// WriteAtomic writes path through write (buffered): into a new temporary file next to the
// target, synced, then renamed over it. On any failure the temporary is removed and path is
// untouched.
func WriteAtomic(path string, write func(io.Writer) error) error {
	a, err := Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(a, 1<<16)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		a.Abort()
		return fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	return a.Commit()
}

// temporaries are the temporary files being written now.
var temporaries = &tempSet{names: map[string]bool{}}

type tempSet struct {
	mu    sync.Mutex
	names map[string]bool
}

func (s *tempSet) add(name string) {
	s.mu.Lock()
	s.names[name] = true
	s.mu.Unlock()
}

func (s *tempSet) remove(name string) {
	s.mu.Lock()
	delete(s.names, name)
	s.mu.Unlock()
}

// RemoveTemporaries removes every temporary being written: what an exit on a signal calls
// before it goes (a write in progress then fails, and its target stays as it was).
func RemoveTemporaries() {
	temporaries.mu.Lock()
	defer temporaries.mu.Unlock()
	for name := range temporaries.names {
		os.Remove(name)
		delete(temporaries.names, name)
	}
}

// Temporaries counts the temporaries being written (for tests).
func Temporaries() int {
	temporaries.mu.Lock()
	defer temporaries.mu.Unlock()
	return len(temporaries.names)
}
