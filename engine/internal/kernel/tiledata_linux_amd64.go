// tiledata_linux_amd64.go: asking Linux for the AMX tile data state (Linux 5.16+).
//
// Invariant: requestTileData is true only when the kernel says the permission is held
// (ARCH_GET_XCOMP_PERM after the request), so no tile instruction ever runs without it.
// Mutation that would silently break it: trusting CPUID alone: on a kernel that never
// granted the state, the first tile load faults (SIGILL) and takes the process down.
package kernel

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	archGetXcompPerm = 0x1022
	archReqXcompPerm = 0x1023
	xfeatureTileData = 18
)

// requestTileData asks for the tile data state for the whole process and checks the grant.
func requestTileData() bool {
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0); e != 0 {
		return false
	}
	var perm uint64
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&perm)), 0); e != 0 {
		return false
	}
	return perm&(1<<xfeatureTileData) != 0
}
