package selftest

import "golang.org/x/sys/unix"

// osVersion names the OS release ("macOS 14.5 (23F79)").
func osVersion() string {
	v, err := unix.Sysctl("kern.osproductversion")
	if err != nil {
		return "macOS (version unknown)"
	}
	if b, err := unix.Sysctl("kern.osversion"); err == nil {
		v += " (" + b + ")"
	}
	return "macOS " + v
}
