package guard

// check.go: a run, and work that is not a run but may still hold more than the process has —
// parsing a huge safetensors header or shard index, generating a checkpoint's largest tensor —
// is checked against the limits in force before it allocates, so it is refused with what it
// would need instead of dying in the Go runtime ("fatal error: out of memory" cannot be
// recovered).
//
// Invariant: the check runs before the allocation it is for, with a bound of what that
// allocation takes at most (parsing JSON into Go values: parseFactor times the bytes), and a
// refused run names the limit it is furthest past. Mutation that would silently break it:
// checking after reading — the read itself is what dies under ulimit -v.

import "fmt"

// Check refuses a run estimated at est that does not fit under every limit in limits,
// naming the limit it is furthest past, what it would need there, and tip (what to change).
func Check(est MemoryEstimate, limits []Limit, tip string) error {
	var bind *Limit
	for i, l := range limits {
		if short := l.Need(est) - l.Free; short > 0 && (bind == nil || short > bind.Need(est)-bind.Free) {
			bind = &limits[i]
		}
	}
	if bind == nil {
		return nil
	}
	need, space := bind.Need(est), ""
	if bind.kind == limitAS {
		made := ""
		if est.Held > 0 {
			made = ", less the page made already"
		}
		space = fmt.Sprintf(" and %s more address space (its weights' mapping whole and room for the heap's largest blocks%s)", FormatBytes(need), made)
	}
	return fmt.Errorf("this run would hold about %s%s, more than %s: %s; %s", est, space, bind.Why, bind.Needs(need), tip)
}

// RunTip is what a run refused for memory may change.
const RunTip = "lower max pixels, use pread residency or a smaller MLP tile, or keep fewer probes"

// CheckMemory refuses a run estimated at est (the engine's EstimatePatches, with what the
// caller adds) that does not fit in this process now (MemoryBudget's limits, maxMemory: the
// run's max memory setting), and sets the Go runtime's soft memory limit from the same limits:
// for runs that start an Engine without a Session (bench, gpumodel, on pages they make
// themselves).
func CheckMemory(est MemoryEstimate, maxMemory int64) error {
	limits := Limits(maxMemory)
	if err := Check(est, limits, "use fewer patches, pread residency or a smaller MLP tile"); err != nil {
		return err
	}
	// What the run will map outside the heap (its weights, the CPU's widened weights) is not
	// mapped yet: the heap's limit leaves it room.
	for i := range limits {
		if limits[i].kind == limitAS {
			limits[i].goMax -= max(est.Mapping, est.Weights) + est.Outside - est.Weights
		} else {
			limits[i].goMax -= est.Outside
		}
	}
	ApplyGoLimit(limits)
	return nil
}

// parseFactor bounds what encoding/json holds while parsing a safetensors header or an index
// into maps and slices, per byte of JSON (measured: 1.3 GB for a 132 MiB header).
const parseFactor = 12

// CheckHold refuses work that would hold need bytes at once (what names it) when the memory
// limits in force (RAM, a cgroup's limit, ulimit -v, maxMemory) leave less.
func CheckHold(what string, need, maxMemory int64) error {
	est := MemoryEstimate{Scratch: need, Largest: need}
	for _, l := range Limits(maxMemory) {
		if short := l.Need(est) - l.Free; short > 0 {
			return fmt.Errorf("%s would hold about %s, more than %s: %s", what, FormatBytes(need), l.Why, l.Needs(l.Need(est)))
		}
	}
	return nil
}

// CheckParse refuses to parse n bytes of JSON (a header, an index) of path that would not fit.
func CheckParse(path, what string, n int64) error {
	return CheckHold(fmt.Sprintf("%s: parsing its %s (%s)", path, what, FormatBytes(n)), parseFactor*n, 0)
}
