package ckpt

// hfcache_test.go: a fake Hugging Face cache in t.TempDir(), laid out as huggingface_hub
// writes it (refs/main -> snapshots/<hash>/ whose files are symlinks into blobs/), holding
// the demo checkpoint. What these tests catch: a snapshot's symlinks not followed, the
// cache looked for in the wrong place or order, a ref that walks out of the cache, and an
// error that does not say where it looked.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHFCache writes models--owner--name with the demo checkpoint's files as blobs, refs
// main (and any more refs) pointing at snapshot hash, and returns the cache dir.
func fakeHFCache(t *testing.T, owner, name, hash string, refs ...string) string {
	t.Helper()
	cache := t.TempDir()
	repo := filepath.Join(cache, "models--"+owner+"--"+name)
	snap := filepath.Join(repo, "snapshots", hash)
	for _, d := range []string{filepath.Join(repo, "blobs"), filepath.Join(repo, "refs"), snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range []string{"config.json", "preprocessor_config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("../../assets/demo", f))
		if err != nil {
			t.Fatal(err)
		}
		blob := filepath.Join(repo, "blobs", strings.Repeat(string(rune('a'+i)), 40))
		if err := os.WriteFile(blob, b, 0o644); err != nil {
			t.Fatal(err)
		}
		// huggingface_hub writes relative links: snapshots/<hash>/f -> ../../blobs/<sha>
		if err := os.Symlink(filepath.Join("..", "..", "blobs", filepath.Base(blob)), filepath.Join(snap, f)); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range append([]string{"main"}, refs...) {
		if err := os.WriteFile(filepath.Join(repo, "refs", r), []byte(hash), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cache
}

func clearHFEnv(t *testing.T) {
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, "")
	}
}

// A repo id opens the snapshot refs/main names, through its symlinks into blobs/.
func TestResolveRepoIDFromCache(t *testing.T) {
	clearHFEnv(t)
	cache := fakeHFCache(t, "Qwen", "Qwen3-VL-Demo", "0123abcd", "v1")
	t.Setenv("HF_HUB_CACHE", cache)
	dir, err := ResolveCheckpoint("Qwen/Qwen3-VL-Demo")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "models--Qwen--Qwen3-VL-Demo", "snapshots", "0123abcd"); dir != want {
		t.Fatalf("resolved to %s, want %s", dir, want)
	}
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatalf("the snapshot does not open: %v", err)
	}
	if ck.VisionBytes() == 0 {
		t.Error("no vision weights in the snapshot")
	}
	for _, rev := range []string{"v1", "0123abcd"} { // a ref name, and a commit hash
		if got, err := ResolveCheckpoint("Qwen/Qwen3-VL-Demo@" + rev); err != nil || got != dir {
			t.Errorf("@%s: %s, %v", rev, got, err)
		}
	}
	if ids := FindHFCache().CachedRepos(); len(ids) != 1 || ids[0] != "Qwen/Qwen3-VL-Demo" {
		t.Errorf("cached repos %v", ids)
	}
}

// The cache is where huggingface_hub puts it: HF_HUB_CACHE, else HF_HOME/hub, else
// XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
func TestHFCacheLocation(t *testing.T) {
	clearHFEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	if c := FindHFCache(); c.Dir != filepath.Join(home, ".cache", "huggingface", "hub") {
		t.Errorf("default cache %s", c.Dir)
	}
	t.Setenv("XDG_CACHE_HOME", "/x")
	if c := FindHFCache(); c.Dir != "/x/huggingface/hub" {
		t.Errorf("with XDG_CACHE_HOME: %s", c.Dir)
	}
	t.Setenv("HF_HOME", "/h")
	if c := FindHFCache(); c.Dir != "/h/hub" || c.Why != "HF_HOME/hub" {
		t.Errorf("with HF_HOME: %+v", c)
	}
	t.Setenv("HF_HUB_CACHE", "/c")
	if c := FindHFCache(); c.Dir != "/c" || c.Why != "HF_HUB_CACHE" {
		t.Errorf("with HF_HUB_CACHE: %+v", c)
	}
	// The default cache really is searched: a repo there resolves with no variable set.
	clearHFEnv(t)
	cache := fakeHFCache(t, "o", "m", "h1")
	if err := os.MkdirAll(filepath.Join(home, ".cache", "huggingface"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cache, filepath.Join(home, ".cache", "huggingface", "hub")); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveCheckpoint("o/m"); err != nil {
		t.Errorf("not found in the default cache: %v", err)
	}
}

// Not found: the error names the repo, the file it looked for and the cache.
func TestResolveRepoIDNotFound(t *testing.T) {
	clearHFEnv(t)
	cache := t.TempDir()
	t.Setenv("HF_HOME", cache)
	_, err := ResolveCheckpoint("Qwen/Qwen3-VL-2B-Instruct")
	if err == nil {
		t.Fatal("a repo that is not cached resolved")
	}
	for _, want := range []string{"Qwen/Qwen3-VL-2B-Instruct", filepath.Join(cache, "hub", "models--Qwen--Qwen3-VL-2B-Instruct", "refs", "main"), "HF_HOME/hub", "hf download"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// Paths stay paths; a ref cannot lead out of the cache; names the Hub refuses are not ids.
func TestResolveCheckpointKeepsPathsAndRefusesEscapes(t *testing.T) {
	clearHFEnv(t)
	cache := fakeHFCache(t, "o", "m", "h1")
	t.Setenv("HF_HUB_CACHE", cache)
	if got, err := ResolveCheckpoint("../../assets/demo"); err != nil || got != "../../assets/demo" {
		t.Errorf("a directory: %s, %v", got, err)
	}
	if got, err := ResolveCheckpoint("/no/such/dir"); err != nil || got != "/no/such/dir" {
		t.Errorf("a missing absolute path: %s, %v (want it unchanged, for OpenCheckpoint to report)", got, err)
	}
	outside := t.TempDir() // an existing directory outside the cache
	escape, err := filepath.Rel(filepath.Join(cache, "models--o--m", "snapshots"), outside)
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(cache, "models--o--m", "refs", "main")
	if err := os.WriteFile(ref, []byte(escape), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveCheckpoint("o/m"); err == nil {
		t.Errorf("a ref walking out of the cache resolved to %s", got)
	}
	for _, s := range []string{"o/m/x", "o/../m", "o--x/m", "a/b@../c", "/o/m", "o/", "o/m@"} {
		if _, _, _, ok := parseRepoID(s); ok {
			t.Errorf("%q parsed as a repo id", s)
		}
	}
}
