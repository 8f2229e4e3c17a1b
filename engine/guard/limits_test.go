package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/imageproc"
)

// writeTree writes files (path relative to root -> content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	mountV2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	mountV1 = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"36 31 0:33 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
)

// The cgroup's limit is read where /proc/self/cgroup and mountinfo say the process's cgroup
// is, in it and in every ancestor up to the mount: the smallest binds, "max" and v1's
// "unlimited" are none, and a cgroup outside the mount (another namespace) reads the mount's.
func TestCgroupLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
		file  string
	}{
		{"v2, the limit on the parent", map[string]string{
			"proc/self/cgroup":                                   "0::/user.slice/app.scope\n",
			"proc/self/mountinfo":                                mountV2,
			"sys/fs/cgroup/user.slice/memory.max":                "2147483648\n",
			"sys/fs/cgroup/user.slice/app.scope/memory.max":      "max\n",
			"sys/fs/cgroup/user.slice/app.scope/memory.current":  "1000\n",
			"sys/fs/cgroup/memory.max-not-at-the-root-cgroup":    "1\n",
			"sys/fs/cgroup/user.slice/app.scope/memory.swap.max": "0\n",
		}, 2 << 30, "/sys/fs/cgroup/user.slice/memory.max"},
		{"v2, the leaf tighter than the parent", map[string]string{
			"proc/self/cgroup":             "0::/a/b\n",
			"proc/self/mountinfo":          mountV2,
			"sys/fs/cgroup/a/memory.max":   "4294967296",
			"sys/fs/cgroup/a/b/memory.max": "1610612736",
		}, 1610612736, "/sys/fs/cgroup/a/b/memory.max"},
		{"v2, none", map[string]string{
			"proc/self/cgroup":           "0::/a\n",
			"proc/self/mountinfo":        mountV2,
			"sys/fs/cgroup/a/memory.max": "max\n",
		}, 0, ""},
		{"v1, unlimited leaf under a limited parent", map[string]string{
			"proc/self/cgroup":    "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n",
			"proc/self/mountinfo": mountV1,
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/docker/memory.limit_in_bytes":     "1073741824\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n",
		}, 1 << 30, "/sys/fs/cgroup/memory/docker/memory.limit_in_bytes"},
		{"a namespace: the cgroup is the mount's root", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"proc/self/mountinfo":      "30 23 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/memory.max": "536870912\n",
		}, 512 << 20, "/sys/fs/cgroup/memory.max"},
		{"a cgroup outside the namespace's mount", map[string]string{
			"proc/self/cgroup":         "0::/../../other\n",
			"proc/self/mountinfo":      mountV2,
			"sys/fs/cgroup/memory.max": "805306368\n",
		}, 768 << 20, "/sys/fs/cgroup/memory.max"},
		{"a mount point with a space", map[string]string{
			"proc/self/cgroup":          "0::/x\n",
			"proc/self/mountinfo":       "30 23 0:26 / /sys/fs/my\\040cg rw - cgroup2 cgroup2 rw\n",
			"sys/fs/my cg/x/memory.max": "123456789\n",
		}, 123456789, "/sys/fs/my cg/x/memory.max"},
		{"no mountinfo: the usual place", map[string]string{
			"proc/self/cgroup":           "0::/s\n",
			"sys/fs/cgroup/s/memory.max": "999999\n",
		}, 999999, "/sys/fs/cgroup/s/memory.max"},
		{"no cgroup file", map[string]string{}, 0, ""},
		{"garbage", map[string]string{
			"proc/self/cgroup":           "0::/g\n",
			"proc/self/mountinfo":        mountV2,
			"sys/fs/cgroup/g/memory.max": "lots\n",
		}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, c.files)
			n, file := cgroupLimit(root)
			if n != c.want || file != c.file {
				t.Errorf("cgroupLimit = %d from %q, want %d from %q", n, file, c.want, c.file)
			}
		})
	}
}

// Each limit in force is listed with what a run may still hold under it, and the check names
// the one a run does not fit and what it would need: RLIMIT_AS counts what is mapped (less the
// heap's free pages), the threads to come, the weights' whole mapping and room for the heap's
// largest blocks; --max-memory and the cgroup count the estimate; the other open runs'
// holdings come off each.
func TestMemoryLimits(t *testing.T) {
	const gib = int64(1) << 30
	p := procMemory{RAM: 64 * gib, AS: 3 * gib, Mapped: 2 * gib, Threads: 1000, GoThreads: 1000, ThreadStack: 8 << 20, ThreadArena: 64 << 20}
	g := goMemory{Total: 600 << 20, Free: 100 << 20, Released: 28 << 20}
	ls := limitsOf(p, g, 0, heldMemory{})
	if len(ls) != 2 || ls[0].kind != limitRAM || ls[1].kind != limitAS {
		t.Fatalf("limits %+v, want the RAM and RLIMIT_AS", ls)
	}
	as := ls[1]
	// 3 GiB - (2 GiB - 128 MiB free in the heap) - the heap's next arena (threads: more than
	// GOMAXPROCS + extraThreads already, none to come)
	if want := 3*gib - (2*gib - 128<<20) - heapArena; as.Free != want {
		t.Errorf("RLIMIT_AS leaves %d, want %d", as.Free, want)
	}
	if !strings.Contains(as.Why, "ulimit -v (RLIMIT_AS) of 3.00 GiB") {
		t.Errorf("why: %q", as.Why)
	}
	est := MemoryEstimate{Weights: 500 << 20, Activations: 300 << 20, Mapping: 520 << 20, Largest: 10 << 20}
	if n := as.Need(est); n != 800<<20+20<<20+20<<20 {
		t.Errorf("need under RLIMIT_AS %d: want the total, the mapping past the weights and twice the largest block", n)
	}
	if n := ls[0].Need(est); n != est.Total() {
		t.Errorf("need under the RAM %d, want the total %d", n, est.Total())
	}
	if err := Check(est, ls, RunTip); err != nil {
		t.Errorf("a run of 840 MiB under 1.06 GiB free: %v", err)
	}
	big := est
	big.Activations = 2 * gib
	err := Check(big, ls, RunTip)
	if err == nil || !strings.Contains(err.Error(), "ulimit -v (RLIMIT_AS)") || !strings.Contains(err.Error(), "it would need ulimit -v ") {
		t.Fatalf("a run past RLIMIT_AS: %v", err)
	}
	var kib int64
	fmt.Sscanf(err.Error()[strings.Index(err.Error(), "it would need ulimit -v ")+len("it would need ulimit -v "):], "%d", &kib)
	if fits := limitsOf(procMemory{RAM: p.RAM, AS: kib << 10, Mapped: p.Mapped, GoThreads: p.GoThreads}, g, 0, heldMemory{}); Check(big, fits, RunTip) != nil {
		t.Errorf("ulimit -v %d, what the message asked for, still refuses it: %v", kib, Check(big, fits, RunTip))
	}

	// --max-memory binds below the rest; the cgroup likewise; the open runs' holdings come off.
	ls = limitsOf(procMemory{RAM: 64 * gib, Cgroup: 2 * gib, CgroupFile: "/sys/fs/cgroup/a/memory.max"}, g, gib, heldMemory{Total: 600 << 20})
	if l := tightest(ls); l.kind != limitFlag || l.Free != gib-600<<20 || !strings.Contains(l.Why, "--max-memory") ||
		!strings.Contains(l.Why, "held by the other open runs") {
		t.Errorf("tightest %+v, want --max-memory less the open runs' 600 MiB", l)
	}
	err = Check(MemoryEstimate{Activations: 1500 << 20}, ls, RunTip)
	if err == nil || !strings.Contains(err.Error(), "--max-memory") || !strings.Contains(err.Error(), "it would need --max-memory 2.05 GiB or more") {
		t.Errorf("1.46 GiB under --max-memory 1 GiB with 600 MiB held: %v", err)
	}
	ls = limitsOf(procMemory{RAM: 64 * gib, Cgroup: 2 * gib, CgroupFile: "/sys/fs/cgroup/a/memory.max"}, g, 0, heldMemory{})
	if err := Check(MemoryEstimate{Activations: 3 * gib}, ls, RunTip); err == nil || !strings.Contains(err.Error(), "the cgroup's memory limit /sys/fs/cgroup/a/memory.max (2.00 GiB)") {
		t.Errorf("3 GiB in a 2 GiB cgroup: %v", err)
	}
	if ls := limitsOf(procMemory{}, g, 0, heldMemory{}); len(ls) != 0 {
		t.Errorf("nothing known: limits %+v", ls)
	}
}

// The threads yet to come count their stacks and (glibc, uncapped) their arenas; with the
// arenas capped (app/arenas_linux.go) only the stacks.
func TestThreadSlack(t *testing.T) {
	defer SetMallocArenas(int(mallocArenas.Load()))
	p := procMemory{Threads: 1, GoThreads: 1, ThreadStack: 8 << 20, ThreadArena: 64 << 20}
	SetMallocArenas(0)
	uncapped := p.threadSlack()
	SetMallocArenas(2)
	capped := p.threadSlack()
	if uncapped <= 0 || capped <= 0 || uncapped != capped*(8+64)/8 {
		t.Errorf("slack %d uncapped, %d capped: want the stacks, and 64 MiB arenas beside each only uncapped", uncapped, capped)
	}
}

// PageBound is never below the page Preprocess makes, and not far above it where the size
// is inside the bounds.
func TestPageBound(t *testing.T) {
	pre := imageproc.QwenConfig()
	pre.PatchSize, pre.MergeSize = 4, 2
	f := pre.PatchSize * pre.MergeSize
	for _, minMax := range [][2]int{{256, 4096}, {64, 100000}, {2000, 2100}, {0, 64}, {5000, 5000}} {
		pre.MinPixels, pre.MaxPixels = minMax[0], minMax[1]
		for _, h := range []int{1, 3, 7, 8, 12, 13, 31, 64, 100, 257} {
			for _, w := range []int{1, 2, 8, 11, 40, 63, 150, 600} {
				img := &imageproc.RGB{W: w, H: h, Pix: make([]uint8, w*h*3)}
				page, err := imageproc.Preprocess(img, pre)
				if err != nil {
					continue // an aspect ratio past 200: refused before anything is allocated
				}
				got := int64(page.Resized.W * page.Resized.H)
				px, width := PageBound(h, w, pre)
				if px < got || width < int64(page.Resized.W) {
					t.Fatalf("%dx%d (h x w), pixels %d..%d: bound %d pixels, %d wide; Preprocess made %dx%d",
						h, w, pre.MinPixels, pre.MaxPixels, px, width, page.Resized.H, page.Resized.W)
				}
				lo, hi := int64(h-f/2)*int64(w-f/2), int64(h+f/2)*int64(w+f/2)
				if h > f/2 && w > f/2 && lo >= int64(pre.MinPixels) && hi <= int64(pre.MaxPixels) && px > hi {
					t.Errorf("%dx%d inside the bounds: bound %d, more than the rounded size", h, w, px)
				}
			}
		}
	}
}

// CheckMemory, made before a run maps its weights (bench, gpumodel), leaves them room in the
// Go heap's soft limit: the heap is held below the limit less what the run will map outside it.
func TestCheckMemorySetsGoLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	ram := physicalMemory()
	if ram < 4<<30 {
		t.Skip("the machine's memory is unknown or under 4 GiB")
	}
	est := MemoryEstimate{Weights: 1 << 30, Mapping: 1 << 30, Outside: 1<<30 + 64<<20, Activations: 100 << 20}
	if err := CheckMemory(est, 0); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got > ram-est.Outside {
		t.Errorf("the Go limit is %d after the check; the RAM (%d) less the run's %d outside the heap is %d", got, ram, est.Outside, ram-est.Outside)
	}
}
