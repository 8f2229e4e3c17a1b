package testfixture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// programs holds the inspector built once per package folder and set of build tags for this
// test process (a build is seconds of linking; the tests only run the binary), in a folder
// RemovePrograms removes.
var programs struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// Program builds the inspector from the package folder pkg (relative to the test's package:
// "." in app, "../app" beside it) with the build tags tags ("" for the release build), or
// returns the one this process built already.
func Program(t testing.TB, pkg, tags string) string {
	t.Helper()
	programs.Lock()
	defer programs.Unlock()
	key := pkg + "\x00" + tags
	if bin, ok := programs.bins[key]; ok {
		return bin
	}
	if programs.dir == "" {
		dir, err := os.MkdirTemp("", "inspector-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		programs.dir, programs.bins = dir, map[string]string{}
	}
	bin := filepath.Join(programs.dir, fmt.Sprintf("build%d", len(programs.bins)), "inspector")
	if out, err := exec.Command("go", "build", "-tags", tags, "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	programs.bins[key] = bin
	return bin
}

// RemovePrograms removes the binaries Program built (a TestMain, after the tests).
func RemovePrograms() {
	programs.Lock()
	defer programs.Unlock()
	if programs.dir != "" {
		os.RemoveAll(programs.dir)
		programs.dir, programs.bins = "", nil
	}
}
