package cachedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverrideWins(t *testing.T) {
	want := t.TempDir()
	t.Setenv(Env, want)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(want, "elsewhere"))
	if got := Dir(); got != want {
		t.Errorf("Dir() = %q with %s=%q", got, Env, want)
	}
}

func TestDefaultIsTheUserCache(t *testing.T) {
	t.Setenv(Env, "")
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache folder here:", err)
	}
	if got := Dir(); got != filepath.Join(base, "turbospark-inspector") || !strings.HasPrefix(got, base) {
		t.Errorf("Dir() = %q, want turbospark-inspector in %q", got, base)
	}
}
