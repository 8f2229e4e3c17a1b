package engine

// memhold.go: work that is not a run but may still hold more than the process has — parsing a
// huge safetensors header or shard index, generating a checkpoint's largest tensor — is
// checked against the same limits as a run before it allocates, so it is refused with what it
// would need instead of dying in the Go runtime ("fatal error: out of memory" cannot be
// recovered).
//
// Invariant: the check runs before the allocation it is for, with a bound of what that
// allocation takes at most (parsing JSON into Go values: parseFactor times the bytes).
// Mutation that would silently break it: checking after reading — the read itself is what
// dies under ulimit -v.

import "fmt"

// parseFactor bounds what encoding/json holds while parsing a safetensors header or an index
// into maps and slices, per byte of JSON (measured: 1.3 GB for a 132 MiB header).
const parseFactor = 12

// CheckHold refuses work that would hold need bytes at once (what names it) when the memory
// limits in force (RAM, a cgroup's limit, ulimit -v, maxMemory) leave less.
func CheckHold(what string, need, maxMemory int64) error {
	est := MemoryEstimate{Scratch: need, Largest: need}
	for _, l := range memoryLimits(maxMemory, nil) {
		if short := l.need(est) - l.free; short > 0 {
			return fmt.Errorf("%s would hold about %s, more than %s: %s", what, FormatBytes(need), l.why, l.needs(l.need(est)))
		}
	}
	return nil
}

// checkParse refuses to parse n bytes of JSON (a header, an index) of path that would not fit.
func checkParse(path, what string, n int64) error {
	return CheckHold(fmt.Sprintf("%s: parsing its %s (%s)", path, what, FormatBytes(n)), parseFactor*n, 0)
}
