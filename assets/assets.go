// Package assets embeds the demo checkpoint and photo, so `inspector` with no arguments
// opens something meaningful on a fresh machine with no download.
//
// Invariant: Demo returns a directory whose files equal the embedded ones byte for byte
// (the engine mmaps the checkpoint, so it must be a real file); the mutation that would
// silently break it: reusing a cache directory left by an older binary with other weights —
// hence the content hash in the directory name.
package assets

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/turbospark/inspector/internal/cachedir"
)

//go:embed demo sample.png LICENSES.md
var files embed.FS

// Demo unpacks the demo checkpoint and photo into the user cache (once per content) and
// returns the checkpoint directory and the photo's path.
func Demo() (dir, photo string, err error) {
	root, err := cacheRoot()
	if err != nil {
		return "", "", err
	}
	if err := unpack(root); err != nil {
		return "", "", err
	}
	return filepath.Join(root, "demo"), filepath.Join(root, "sample.png"), nil
}

// cacheRoot names a directory by the hash of everything embedded.
func cacheRoot() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(cachedir.Dir(), "assets-"+hex.EncodeToString(h.Sum(nil))[:16]), nil
}

func unpack(root string) error {
	return fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(root, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if st, err := os.Stat(dst); err == nil && !st.IsDir() {
			if info, _ := d.Info(); info != nil && info.Size() == st.Size() {
				return nil
			}
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	})
}
