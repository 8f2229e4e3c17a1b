package assets

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/internal/cachedir"
)

// The unpacked demo equals the embedded files, and a second call reuses them.
func TestDemoUnpacks(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, photo, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "preprocessor_config.json", "model.safetensors"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := files.ReadFile("demo/" + name)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the embedded file", name)
		}
	}
	if st, err := os.Stat(photo); err != nil || st.Size() == 0 {
		t.Errorf("photo %s: %v", photo, err)
	}
	dir2, _, err := Demo()
	if err != nil || dir2 != dir {
		t.Errorf("second unpack: %s, %v", dir2, err)
	}
}
