// Package cachedir names the inspector's own cache folder: the unpacked demo, the remembered
// Metal probe failure. INSPECTOR_CACHE_DIR replaces it on every platform — the one override
// tests (and users who want the cache elsewhere) set. XDG_CACHE_HOME is not enough: Go's
// os.UserCacheDir reads it on Linux only (on macOS it is always ~/Library/Caches), so a test
// that isolated its cache with it would write into a Mac user's real cache and see what an
// earlier test left there.
//
// Invariant: every path of the inspector's cache comes from Dir. Mutation that would silently
// break it: a package calling os.UserCacheDir itself — on a Mac the override would not reach
// it, and a test's remembered probe crash would leak into the next test and the user's runs.
package cachedir

import (
	"os"
	"path/filepath"
)

// Env is the variable that overrides the folder.
const Env = "INSPECTOR_CACHE_DIR"

// Dir is the inspector's cache folder (not created here): $INSPECTOR_CACHE_DIR, else
// turbospark-inspector in the user's cache folder (~/.cache on Linux, ~/Library/Caches on
// macOS), else in the temporary folder.
func Dir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "turbospark-inspector")
}
