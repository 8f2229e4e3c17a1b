package harness

// testing.go: one driver build per test binary, shared by the shaders and metal tests.
//
// Invariant: a missing C++ compiler fails the test with the install hint, never skips it.
// Mutation that would silently break it: tb.Skip instead of tb.Fatal when Build fails — CI
// without g++ would then report every kernel as passing without running one.

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var shared struct {
	mu      sync.Mutex
	drivers map[bool]*Driver
}

// cacheDir is where drivers are built: the user cache (a build is reused while the
// sources, the compiler and the flags are unchanged), else a temporary directory.
func cacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(d, "turbospark-inspector", "shader-harness")
		if os.MkdirAll(dir, 0o755) == nil {
			return dir
		}
	}
	return filepath.Join(os.TempDir(), "turbospark-shader-harness")
}

// Shared returns the driver of this test binary, building it the first time.
func Shared(tb testing.TB, mutants bool) *Driver {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if d := shared.drivers[mutants]; d != nil {
		return d
	}
	d, err := Build(cacheDir(), mutants)
	if err != nil {
		tb.Fatal(err)
	}
	if shared.drivers == nil {
		shared.drivers = map[bool]*Driver{}
	}
	shared.drivers[mutants] = d
	return d
}
