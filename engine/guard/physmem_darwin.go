package guard

// physmem_darwin.go: what macOS says about this process's memory: the RAM only. macOS has no
// cgroups and does not enforce RLIMIT_AS (setrlimit accepts it and mmap ignores it), so the
// budget is the machine's memory or --max-memory.
//
// Invariant: physicalMemory is hw.memsize, the whole unified memory (the GPU's share included,
// which Metal's no-copy buffers over the weights do not add to). Mutation that would silently
// break it: taking the free memory instead (vm_stat's free pages) — macOS keeps that near
// zero with files cached, and pages that fit would be refused.

import "golang.org/x/sys/unix"

// physicalMemory is the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}

// readProcMemory reads this process's limits: the RAM.
func readProcMemory() procMemory { return procMemory{RAM: physicalMemory()} }
