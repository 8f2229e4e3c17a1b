package fsx

// output.go: where an output may go. An output is refused, before any work and before
// anything is opened, when it is an input (the same file by any name: a hard or symbolic
// link, a path through a symlinked folder), lies anywhere under an input folder (a
// checkpoint folder: every file in it, those the run opened or not, and any new name), is
// another output, or cannot be written (its folder is missing or not writable, it is a
// folder, a read-only file, a symlink to nothing, a name too long).
//
// Invariant: paths are compared after every symlink in them is resolved, the file's own
// when it exists, else its folder's. Mutation that would silently break it: comparing
// filepath.Abs of a file that does not exist yet (as this package once did) — two outputs
// named through a folder and a symlink to it are "different", and the second rename
// replaces the first.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrSameFile says an output would overwrite an input or another output.
var ErrSameFile = errors.New("the same file")

// sameFileError is an ErrSameFile that says which files, in its own words.
type sameFileError string

func (e sameFileError) Error() string        { return string(e) }
func (e sameFileError) Is(target error) bool { return target == ErrSameFile }

// maxName is the longest file name (bytes) Linux and macOS file systems take.
const maxName = 255

// CheckOutputs refuses an output that is one of inputs (the same file, by identity or by
// resolved path), lies under an input that is a folder, or repeats another output. Empty
// paths are skipped.
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
			if under(out, s.path) {
				return sameFileError(fmt.Sprintf("%s: inside %s, a folder the run reads: outputs are never written there (choose another folder)", out, s.path))
			}
			if same(out, s.path) {
				return sameFileError(fmt.Sprintf("%s: would overwrite %s (%s)", out, s.role, s.path))
			}
		}
		seen = append(seen, named{out, "another output"})
	}
	return nil
}

// resolved is p with every symlink resolved: the file's own when it exists (a symlink to
// nothing is an error), else its folder's joined with its name; absolute and clean.
func resolved(p string) (string, error) {
	if st, err := os.Lstat(p); err == nil {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			if st.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("%s: a symbolic link to a file that does not exist", p)
			}
			return "", err
		}
		return filepath.Abs(r)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	dir, base := filepath.Split(abs)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(r, base), nil
	}
	return abs, nil // the folder does not exist either: CheckWritable says so
}

// same says whether a and b name one file: the same file on disk (any links followed), or
// the same resolved path.
func same(a, b string) bool {
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(sa, sb)
	}
	ra, err1 := resolved(a)
	rb, err2 := resolved(b)
	return err1 == nil && err2 == nil && ra == rb
}

// under says whether out lies inside dir (at any depth), when dir is a folder: one of the
// folders above out's resolved path is dir, by identity. Besides, an existing out that is
// the same file as any entry of dir (say, the blob a Hugging Face snapshot links to) is
// under it.
func under(out, dir string) bool {
	ds, err := os.Stat(dir)
	if err != nil || !ds.IsDir() {
		return false
	}
	r, err := resolved(out)
	if err != nil {
		return false
	}
	for p := filepath.Dir(r); ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && os.SameFile(st, ds) {
			return true
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	os_, err := os.Stat(out)
	if err != nil {
		return false
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(st, os_) {
			return true
		}
	}
	return false
}

// CheckWritable says, before any work, whether path can be written as an output: its
// folder exists and takes new files, the name fits the file system, and an existing path
// is a regular file (or a symlink to one: the write goes through to it) that is not
// read-only. Nothing is left behind.
func CheckWritable(path string) error {
	if filepath.Base(path) == "." || filepath.Base(path) == ".." || len(path) > 0 && os.IsPathSeparator(path[len(path)-1]) {
		return fmt.Errorf("%s: names a folder, not a file", path)
	}
	target, err := resolved(path)
	if err != nil {
		return err
	}
	if n := len(filepath.Base(target)); n > maxName {
		return fmt.Errorf("%s: the file name is %d bytes, longer than the %d a file system takes", path, n, maxName)
	}
	if err := writableTarget(path, target); err != nil {
		return err
	}
	dir := filepath.Dir(target)
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: the folder %s does not exist", path, dir)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a folder", path, dir)
	}
	probe, err := os.CreateTemp(dir, ".inspector-probe-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", path, dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// writableTarget refuses an existing target that is not a regular file or is read-only
// (no write permission bit at all, or none for this user).
func writableTarget(path, target string) error {
	st, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %s, not a file: not written", path, kind(st.Mode()))
	}
	if st.Mode().Perm()&0o222 == 0 || unix.Access(target, unix.W_OK) != nil {
		return fmt.Errorf("%s: the file is read-only (mode %04o): not written; make it writable or choose another name", path, st.Mode().Perm())
	}
	return nil
}

// unwrapPath drops a PathError's operation and path (the caller names the path).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, syscall.EROFS) {
			return errors.New("a read-only file system")
		}
		return pe.Err
	}
	return err
}
