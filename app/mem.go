package main

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// peakRSS is the process's peak resident set in bytes (ru_maxrss: KiB on Linux, bytes on macOS).
func peakRSS() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}
