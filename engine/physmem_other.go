//go:build !linux && !darwin

package engine

// PhysicalMemory is unknown here.
func PhysicalMemory() int64 { return 0 }
