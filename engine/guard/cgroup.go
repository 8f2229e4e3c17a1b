package guard

// cgroup.go: the memory limit of the cgroup this process runs in, read from the
// files under a root ("/" for the real ones; a fake tree in tests): /proc/self/cgroup names
// the process's cgroup in each hierarchy, /proc/self/mountinfo where each hierarchy is
// mounted; cgroup v2's memory.max ("max": none) and v1's memory.limit_in_bytes (2^63 rounded
// down to a page: none) are read in that cgroup and in every ancestor up to the mount, and
// the smallest binds.
//
// Invariant: a limit set on an ancestor counts (a container's limit sits on the container's
// cgroup, the process in a child of it), and a cgroup path outside the mount (another
// cgroup namespace) reads the mount's own files rather than none. Mutation that would
// silently break it: reading only the leaf's memory.max — under systemd or a container
// runtime that puts the process in a child cgroup without a limit of its own, the limit
// above it would never be seen and a page past it would be killed instead of refused.

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupLimit is the tightest memory limit of this process's cgroups under root, and the
// file that sets it (0, "" when none does).
func cgroupLimit(root string) (int64, string) {
	own, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, ""
	}
	mounts, _ := os.ReadFile(filepath.Join(root, "proc/self/mountinfo"))
	var best int64
	var file string
	for _, line := range strings.Split(string(own), "\n") {
		// hierarchy-ID:controller-list:cgroup-path; v2 is "0::/path"
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		v2 := f[0] == "0" && f[1] == ""
		if !v2 && !hasWord(f[1], ",", "memory") {
			continue
		}
		name := "memory.limit_in_bytes"
		if v2 {
			name = "memory.max"
		}
		mountRoot, mountPoint := cgroupMount(string(mounts), v2)
		if mountPoint == "" { // no mountinfo: where systemd and container runtimes mount them
			mountRoot, mountPoint = "/", "/sys/fs/cgroup"
			if !v2 {
				mountPoint = "/sys/fs/cgroup/memory"
			}
		}
		if n, at := limitOnPath(root, mountRoot, mountPoint, f[2], name); n > 0 && (best == 0 || n < best) {
			best, file = n, at
		}
	}
	return best, file
}

// limitOnPath reads name in the cgroup at cg (a path in the hierarchy mounted at mountPoint
// from its mountRoot) and in its ancestors up to the mount; the smallest limit, and where.
func limitOnPath(root, mountRoot, mountPoint, cg, name string) (int64, string) {
	rel, ok := strings.CutPrefix(path.Clean(cg), path.Clean(mountRoot))
	if !ok || strings.HasPrefix(path.Clean(cg), "/..") {
		rel = "" // outside what is mounted (another namespace): the mount's own files
	}
	var best int64
	var file string
	dir := path.Join(mountPoint, rel)
	for {
		at := path.Join(dir, name)
		if n := readLimit(filepath.Join(root, at)); n > 0 && (best == 0 || n < best) {
			best, file = n, at
		}
		if dir == path.Clean(mountPoint) || dir == "/" || dir == "." {
			return best, file
		}
		dir = path.Dir(dir)
	}
}

// noLimit is where a v1 memory.limit_in_bytes means none (the kernel writes 2^63 rounded down
// to a page; no machine has 4 EiB).
const noLimit = 1 << 62

// readLimit reads a memory.max or memory.limit_in_bytes: 0 for none, "max", or unreadable.
func readLimit(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0 // "max", garbage, or v1's "unlimited"
	}
	return n
}

// cgroupMount finds the v2 (cgroup2) or the v1 memory hierarchy in mountinfo: the root of
// the hierarchy that is mounted, and where.
func cgroupMount(mountinfo string, v2 bool) (root, point string) {
	for _, line := range strings.Split(mountinfo, "\n") {
		// ID parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		switch {
		case v2 && g[0] == "cgroup2":
		case !v2 && g[0] == "cgroup" && len(g) >= 3 && hasWord(g[2], ",", "memory"):
		default:
			continue
		}
		return unescapeMount(f[3]), unescapeMount(f[4])
	}
	return "", ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011, \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasWord(list, sep, w string) bool {
	for _, x := range strings.Split(list, sep) {
		if x == w {
			return true
		}
	}
	return false
}
