package quitwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/turbospark/inspector/internal/fsx"
)

// The watch lets a write in progress finish before it exits (0), and exits at once when none
// is in progress.
func TestEndWaitsForTheWriteInProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.png")
	w, err := fsx.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("figure")); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	go end(func(code int) { exited <- code })
	select {
	case <-exited:
		t.Fatal("the watch exited while an export was being written")
	case <-time.After(200 * time.Millisecond):
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not exit once the write finished")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "figure" {
		t.Errorf("the export: %q, %v", b, err)
	}
	go end(func(code int) { exited <- code })
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("with no write in progress the watch did not exit")
	}
}
