package fsx

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Two outputs named through a folder and a symlink to it are one file, though neither
// exists yet.
func TestCheckOutputsThroughSymlinkedFolder(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	err := CheckOutputs(nil, []string{filepath.Join(real, "out.json"), filepath.Join(link, "out.json")})
	if !errors.Is(err, ErrSameFile) {
		t.Errorf("real/out.json and link/out.json: %v, want them refused as one file", err)
	}
	if err := CheckOutputs(nil, []string{filepath.Join(real, "a.json"), filepath.Join(link, "b.json")}); err != nil {
		t.Errorf("two names in one folder: %v", err)
	}
}

// An input folder protects everything under it: the files in it by any name (a Hugging Face
// snapshot's symlinks and the blobs they name), new names in it and below it.
func TestCheckOutputsInputFolder(t *testing.T) {
	root := t.TempDir()
	blobs := filepath.Join(root, "blobs")
	snap := filepath.Join(root, "snapshots", "abc")
	os.MkdirAll(blobs, 0o755)
	os.MkdirAll(filepath.Join(snap, "sub"), 0o755)
	blob := filepath.Join(blobs, "1234")
	os.WriteFile(blob, []byte("weights"), 0o644)
	os.Symlink(blob, filepath.Join(snap, "model.safetensors"))
	os.WriteFile(filepath.Join(snap, "tokenizer.json"), []byte("{}"), 0o644)
	for _, out := range []string{
		filepath.Join(snap, "model.safetensors"),
		filepath.Join(snap, "tokenizer.json"),
		filepath.Join(snap, "new.safetensors"),
		filepath.Join(snap, "sub", "x.json"),
		blob, // the file a snapshot entry links to
	} {
		err := CheckOutputs([]string{snap}, []string{out})
		if !errors.Is(err, ErrSameFile) || !strings.Contains(err.Error(), out) {
			t.Errorf("%s: %v, want it refused naming it", out, err)
		}
	}
	if err := CheckOutputs([]string{snap}, []string{filepath.Join(root, "out.json")}); err != nil {
		t.Errorf("beside the folder: %v", err)
	}
}

// A symlink output is written through (the link stays, the file it names is replaced); a
// symlink to nothing is refused.
func TestWriteAtomicThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink(target, link)
	if err := WriteAtomic(link, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("the link's target holds %q", b)
	}
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink(filepath.Join(dir, "missing", "x.json"), dangling)
	if err := WriteAtomic(dangling, writeString("new")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a symlink to nothing: %v", err)
	}
}

// A read-only target is refused and unchanged; a writable one keeps its mode.
func TestWriteAtomicPermissions(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("old"), 0o444)
	if err := WriteAtomic(ro, writeString("new")); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a read-only file: %v", err)
	}
	if b, _ := os.ReadFile(ro); string(b) != "old" {
		t.Errorf("the read-only file became %q", b)
	}
	private := filepath.Join(dir, "private.json")
	os.WriteFile(private, []byte("old"), 0o600)
	os.Chmod(private, 0o600)
	if err := WriteAtomic(private, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(private); st.Mode().Perm() != 0o600 {
		t.Errorf("a 0600 file became %04o", st.Mode().Perm())
	}
	fresh := filepath.Join(dir, "fresh.json")
	if err := WriteAtomic(fresh, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("a new file is %04o", st.Mode().Perm())
	}
}

// A name of 250 bytes is written: the temporary's own name is short.
func TestWriteAtomicLongName(t *testing.T) {
	p := filepath.Join(t.TempDir(), strings.Repeat("é", 120)+".json") // 244 bytes
	if err := WriteAtomic(p, writeString("x")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Errorf("%q", b)
	}
}

// An exit on a signal removes the temporaries of writes in progress.
func TestRemoveTemporaries(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "dump.safetensors")
	os.WriteFile(p, []byte("old"), 0o644)
	a, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("half of the new"))
	if n := Temporaries(); n != 1 {
		t.Fatalf("%d temporaries alive, want 1", n)
	}
	RemoveTemporaries()
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := a.Commit(); err == nil {
		t.Error("a write whose temporary was removed committed")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the target became %q", b)
	}
	if n := Temporaries(); n != 0 {
		t.Errorf("%d temporaries still counted", n)
	}
}

// CheckWritable refuses, before any work, what the write would fail on at the end.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("old"), 0o444)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "out.json"), "does not exist"},
		{dir, "a directory, not a file"},
		{dir + "/", "names a folder"},
		{dir + "/.", "names a folder"},
		{filepath.Join(dir, strings.Repeat("n", 256)), "longer than"},
		{ro, "read-only"},
		{unwritableDir() + "/out.json", "cannot write in"},
	} {
		if strings.HasPrefix(c.path, "/out.json") {
			continue // no folder that refuses even root's new files on this OS
		}
		err := CheckWritable(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	ok := filepath.Join(dir, "ok.json")
	if err := CheckWritable(ok); err != nil {
		t.Errorf("a new file in a folder: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the check left files: %v", ents)
	}
}

// unwritableDir is a folder that exists and refuses new files even to root (tests run as root
// in CI, where a folder's mode bits refuse nothing): proc's on Linux, the sealed system volume
// on macOS; "" elsewhere.
func unwritableDir() string {
	switch runtime.GOOS {
	case "linux":
		return "/proc/self"
	case "darwin":
		return "/System"
	}
	return ""
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}
