package ckpt

// hfcache.go: a checkpoint named as a Hugging Face repo id ("Qwen/Qwen3-VL-2B-Instruct",
// optionally "@revision") is found in the local Hugging Face cache, laid out as
// huggingface_hub writes it: <cache>/models--Qwen--Qwen3-VL-2B-Instruct/refs/main holds the
// commit hash and snapshots/<hash>/ is the checkpoint directory (its files are symlinks into
// blobs/, which the engine follows: internal/fsx.OpenRegular). The CLI's --checkpoint, verify
// and the window's open path all call ResolveCheckpoint; nothing is downloaded.
//
// Invariant: an existing directory is always taken as it is named, and a repo id resolves
// only to a directory inside the cache's models--owner--name/snapshots/. The mutation that
// would silently break it: joining the ref file's contents (or the revision) into the path
// unchecked — a ref holding "../../.." would name any directory on the machine.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/turbospark/inspector/internal/fsx"
)

// repoPart is one side of owner/name as the Hub allows it (letters, digits, '-', '_', '.').
var repoPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// HFCache is where the Hugging Face cache is, and which setting said so.
type HFCache struct {
	Dir string
	Why string // "HF_HUB_CACHE", "HF_HOME/hub", ..., or "the default"
}

// FindHFCache is the hub cache huggingface_hub uses: HF_HUB_CACHE, else the older
// HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub.
func FindHFCache() HFCache {
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if d := os.Getenv(v); d != "" {
			return HFCache{expandHome(d), v}
		}
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return HFCache{filepath.Join(expandHome(d), "hub"), "HF_HOME/hub"}
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return HFCache{filepath.Join(expandHome(d), "huggingface", "hub"), "XDG_CACHE_HOME/huggingface/hub"}
	}
	home, _ := os.UserHomeDir()
	return HFCache{filepath.Join(home, ".cache", "huggingface", "hub"), "the default, ~/.cache/huggingface/hub"}
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// parseRepoID splits "owner/name[@revision]"; ok is false for anything else (a path). As on
// the Hub, neither part may hold ".." or "--" (the cache joins owner and name with "--").
func parseRepoID(s string) (owner, name, rev string, ok bool) {
	id, rev, hasRev := strings.Cut(s, "@")
	owner, name, found := strings.Cut(id, "/")
	if !found || !repoPart.MatchString(owner) || !repoPart.MatchString(name) || strings.Contains(id, "..") || strings.Contains(id, "--") {
		return "", "", "", false
	}
	if hasRev && !validRef(rev) {
		return "", "", "", false
	}
	return owner, name, rev, true
}

// validRef: a branch, tag or commit name that stays one level below refs/ or snapshots/.
func validRef(r string) bool {
	return r != "" && r != "." && r != ".." && !strings.ContainsAny(r, `/\`) && !strings.ContainsRune(r, 0)
}

// ResolveCheckpoint turns what a user named as a checkpoint into a directory: an existing
// directory as it is, a repo id ("owner/name", "owner/name@revision") as its snapshot in
// the local Hugging Face cache. Anything else comes back unchanged, for OpenCheckpoint to
// say what is wrong with it.
func ResolveCheckpoint(name string) (string, error) {
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return name, nil
	}
	owner, repo, rev, ok := parseRepoID(name)
	if !ok {
		return name, nil
	}
	return FindHFCache().Snapshot(owner, repo, rev)
}

// Snapshot is the directory of owner/name at rev (main when empty) in the cache.
func (c HFCache) Snapshot(owner, name, rev string) (string, error) {
	id := owner + "/" + name
	repoDir := filepath.Join(c.Dir, "models--"+owner+"--"+name)
	if rev == "" {
		rev = "main"
	}
	hash, refErr := c.readRef(repoDir, rev)
	if refErr == nil {
		snap := filepath.Join(repoDir, "snapshots", hash)
		if st, err := os.Stat(snap); err == nil && st.IsDir() {
			return snap, nil
		}
		return "", fmt.Errorf("checkpoint %s: %s names snapshot %s, which is not in the cache (%s); looked in the Hugging Face cache %s (%s)",
			id, filepath.Join(repoDir, "refs", rev), hash, snap, c.Dir, c.Why)
	}
	// A commit hash names its snapshot directly.
	if snap := filepath.Join(repoDir, "snapshots", rev); rev != "main" {
		if st, err := os.Stat(snap); err == nil && st.IsDir() {
			return snap, nil
		}
	}
	return "", fmt.Errorf("checkpoint %s: no such directory, and not in the Hugging Face cache: looked for %s (cache %s, from %s; "+
		"set HF_HUB_CACHE or HF_HOME to look elsewhere, or download it with `hf download %s`)",
		revName(id, rev), filepath.Join(repoDir, "refs", rev), c.Dir, c.Why, id)
}

// revName is id with its revision, unless that is main.
func revName(id, rev string) string {
	if rev == "main" {
		return id
	}
	return id + "@" + rev
}

// readRef reads refs/<rev>: one commit hash.
func (c HFCache) readRef(repoDir, rev string) (string, error) {
	b, err := fsx.ReadSmall(filepath.Join(repoDir, "refs", rev), 256)
	if err != nil {
		return "", err
	}
	hash := strings.TrimSpace(string(b))
	if !validRef(hash) {
		return "", errors.New("bad ref " + rev)
	}
	return hash, nil
}

// CachedRepos lists the models in the cache that have a main snapshot, as repo ids, sorted.
func (c HFCache) CachedRepos() []string {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "models--")
		owner, repo, found := strings.Cut(rest, "--")
		if !ok || !found {
			continue
		}
		if _, err := c.Snapshot(owner, repo, ""); err == nil {
			ids = append(ids, owner+"/"+repo)
		}
	}
	sort.Strings(ids)
	return ids
}
