package guard

// physmem_linux.go: what Linux says about this process's memory: the RAM, the cgroup's limit,
// RLIMIT_AS (ulimit -v) and the address space already mapped, and what a thread yet to come
// will map. limits.go turns these into the budget.
//
// Invariant: under RLIMIT_AS every mapping counts at its size, whether or not it is touched:
// the Go runtime's reservations (about 1.1 GiB of PROT_NONE page-allocator summaries on
// amd64), each thread's stack, each glibc malloc arena (64 MiB a thread in a cgo binary, as
// pthread_getattr_np allocates in the new thread), the weights' mapping. So the budget starts
// from VmSize, not from what is resident. Mutation that would silently break it: reading
// VmRSS instead of VmSize — the check would pass pages that the next mmap, a thread's stack
// or the Go heap's next arena cannot get, and the process would die in "fatal error: out of
// memory" half way through instead of being refused.

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// physicalMemory is the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// readProcMemory reads this process's limits and its address space now.
func readProcMemory() procMemory {
	p := procMemory{RAM: physicalMemory()}
	p.Cgroup, p.CgroupFile = cgroupLimit("/")
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && rl.Cur < noLimit {
		p.AS = int64(rl.Cur)
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		p.Mapped, p.Threads = parseStatus(status)
	}
	p.ThreadStack, p.ThreadArena = threadCosts()
	return p
}

// parseStatus reads VmSize (bytes) and Threads from /proc/PID/status.
func parseStatus(status []byte) (vmSize int64, threads int) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmSize":
			vmSize = n * 1024 // kB
		case "Threads":
			threads = int(n)
		}
	}
	return vmSize, threads
}

// glibcArena is the address space glibc reserves for a thread's malloc arena (HEAP_MAX_SIZE,
// 2 * the 32 MiB default mmap threshold on 64-bit).
const glibcArena = 64 << 20

// threadCosts is the address space one more thread of this process maps: its stack, and its
// malloc arena where glibc gives it one.
var threadCosts = sync.OnceValues(func() (stack, arena int64) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil || !bytes.Contains(maps, []byte("/libc.so.6")) {
		// A static Go binary (CGO_ENABLED=0): the runtime's clone()d threads run on 16 KiB
		// system stacks from the Go heap; nothing else is mapped per thread.
		return 64 << 10, 0
	}
	// cgo on glibc: pthread_create maps the default stack (RLIMIT_STACK, 8 MiB where it is
	// unlimited) and a guard page, and the thread's first malloc (Go's threadentry calls
	// pthread_getattr_np, which allocates) reserves an arena of its own.
	stack = 8 << 20
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_STACK, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && rl.Cur > 0 && rl.Cur < 1<<32 {
		stack = int64(rl.Cur)
	}
	return stack + 4096, glibcArena
})
