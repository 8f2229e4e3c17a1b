package fsx

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO, a directory and /dev/null are refused at once (a plain open would block on the
// FIFO forever).
func TestOpenRegularRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.png")
	os.Symlink(fifo, link)
	for _, c := range []struct{ path, want string }{{fifo, "named pipe"}, {link, "named pipe"}, {dir, "directory"}, {"/dev/null", "device"}} {
		done := make(chan error, 1)
		go func() { _, err := OpenRegular(c.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("%s: %v, want an error naming it %s", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OpenRegular blocked", c.path)
		}
	}
	reg := filepath.Join(dir, "ok.json")
	os.WriteFile(reg, []byte("{}"), 0o644)
	if f, err := OpenRegular(reg); err != nil {
		t.Errorf("a regular file: %v", err)
	} else {
		f.Close()
	}
}

func TestReadSmallBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(p, make([]byte, 100), 0o644)
	if _, err := ReadSmall(p, 99); err == nil || !strings.Contains(err.Error(), "99-byte bound") {
		t.Errorf("over the bound: %v", err)
	}
	if b, err := ReadSmall(p, 100); err != nil || len(b) != 100 {
		t.Errorf("at the bound: %d bytes, %v", len(b), err)
	}
}

// A failing writer leaves the old file as it was and no temporary file behind.
func TestWriteAtomicKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	os.WriteFile(p, []byte("old"), 0o644)
	boom := errors.New("disk full")
	err := WriteAtomic(p, func(w io.Writer) error {
		w.Write([]byte("half of the new"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "not changed") {
		t.Errorf("err %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the old file became %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := WriteAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("after a good write: %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "model.safetensors")
	os.WriteFile(in, []byte("x"), 0o644)
	link := filepath.Join(dir, "alias.safetensors")
	os.Symlink(in, link)
	for _, c := range []struct {
		outs []string
		ok   bool
	}{
		{[]string{filepath.Join(dir, "dump.safetensors"), filepath.Join(dir, "r.json")}, true},
		{[]string{in}, false},
		{[]string{link}, false}, // the same file by another name
		{[]string{filepath.Join(dir, ".", "model.safetensors")}, false},
		{[]string{filepath.Join(dir, "x"), filepath.Join(dir, "x")}, false}, // two outputs, one file
		{[]string{"", ""}, true},
	} {
		err := CheckOutputs([]string{in}, c.outs)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrSameFile)) {
			t.Errorf("outputs %v: %v", c.outs, err)
		}
	}
}
