package ckpt_test

// fifo_test.go: a named pipe (or a device, or a directory) given where a file is expected —
// the image, config.json, preprocessor_config.json, a shard, the shard index — is refused
// at once with a message naming it, never opened and waited on.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/imageproc"
)

// withFIFO copies the fixture checkpoint directory with file name replaced by a FIFO.
func withFIFO(t *testing.T, name string) string {
	t.Helper()
	src := openFixture(t, "qwen3vl_vision_tiny_f32").dir
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		target, _ := filepath.EvalSymlinks(filepath.Join(src, e.Name()))
		must(t, os.Symlink(target, filepath.Join(dir, e.Name())))
	}
	os.Remove(filepath.Join(dir, name))
	must(t, syscall.Mkfifo(filepath.Join(dir, name), 0o644))
	return dir
}

func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: blocked for 5 s", what)
		return nil
	}
}

func TestFIFOsRefused(t *testing.T) {
	for _, name := range []string{"config.json", "preprocessor_config.json", "model.safetensors"} {
		dir := withFIFO(t, name)
		err := within(t, name, func() error { _, err := ckpt.OpenCheckpoint(dir); return err })
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("%s as a FIFO: %v", name, err)
		}
	}
	fifo := filepath.Join(t.TempDir(), "photo.png")
	must(t, syscall.Mkfifo(fifo, 0o644))
	err := within(t, "image", func() error { _, err := imageproc.Load(fifo, imageproc.DefaultLimits()); return err })
	if err == nil || !strings.Contains(err.Error(), "photo.png") || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("an image FIFO: %v", err)
	}
	err = within(t, "a directory as the image", func() error { _, err := imageproc.Load(t.TempDir(), imageproc.DefaultLimits()); return err })
	if err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory as the image: %v", err)
	}
}
