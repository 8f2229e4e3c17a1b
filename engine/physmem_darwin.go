package engine

import "golang.org/x/sys/unix"

// PhysicalMemory is the machine's RAM in bytes (0 if unknown).
func PhysicalMemory() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}
