//go:build !linux && !darwin

package guard

// physmem_other.go: elsewhere nothing is known of the machine's memory; only --max-memory
// bounds a run.
//
// Invariant: an unknown limit is 0 and 0 means none, never a small default. Mutation that
// would silently break it: returning a guessed 8 GiB — every larger page would be refused on
// machines that have the memory.

// physicalMemory is unknown here.
func physicalMemory() int64 { return 0 }

// readProcMemory knows nothing here.
func readProcMemory() procMemory { return procMemory{} }
