//go:build !darwin

package selftest

import "golang.org/x/sys/unix"

// osVersion names the OS release ("Linux 6.1.0-18-amd64").
func osVersion() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
