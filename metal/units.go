package metal

// units.go: what the process's Metal is made of, decided on every platform — the kernel library
// compiled unit by unit (shaders.Units: core, the simdgroup matmul, the scalar matmul, flash
// attention), one pipeline per kernel, and what a failure of each costs. gpu_darwin.go runs this
// with the real newLibraryWithSource and newComputePipelineStateWithFunction:error:; the tests
// run it with compiles and pipelines that fail on demand, and the Linux stand-in GPU is built by
// it too.
//
//   - core does not compile, or one of its kernels (or a kernel with no fallback) gets no
//     pipeline: Metal is unavailable, with Apple's error;
//   - a unit with a fallback does not compile: a FamilyErrors entry ("matmul (simdgroup
//     matrices) did not compile on macOS 15.2: ...; the scalar matmul runs instead") and its
//     ops run the fallback kernels; one of its kernels gets no pipeline: that kernel alone runs
//     its fallback (a flash kernel is noted in Fallbacks, as before; any other in FamilyErrors);
//   - the fallback does not compile either: Metal is unavailable, with both errors;
//   - a unit that is only a fallback does not compile while its primary runs: a FamilyErrors
//     entry, nothing else.
//
// Invariant: a build that succeeds has a pipeline for every kernel or for its fallback kernel,
// so every op runs; a build that fails releases every pipeline it made. Mutation that would
// silently break it: treating a failed unit's kernels as present (or checking only that some
// unit compiled) — the first matmul on that Mac would panic "no pipeline" mid-run instead of
// Metal running on the scalar kernels.

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/turbospark/inspector/shaders"
)

// unitBuilder is how a device compiles a unit and makes a pipeline (L: a library, P: a
// pipeline).
type unitBuilder[L, P any] struct {
	os       string                          // "macOS 15.2", for messages
	compile  func(u shaders.Unit) (L, error) // the unit's Source(), compiled
	pipeline func(lib L, kernel string) (P, error)
	free     func(lib L)  // a compiled library, once its pipelines are made
	release  func(pipe P) // a pipeline, when the build fails
}

// builtUnits is what a build made and what it reports.
type builtUnits[P any] struct {
	pipelines map[string]P
	// fallbacks: flash kernels without a pipeline (DeviceInfo.Fallbacks: the pipeline's error).
	fallbacks []string
	// familyErrors: every other degradation, each a sentence with Apple's error and what runs.
	familyErrors []string
}

// buildUnits compiles every unit and makes every pipeline it can, then decides (see the file
// comment). On an error every pipeline made is released.
func buildUnits[L, P any](b unitBuilder[L, P]) (built builtUnits[P], err error) {
	built.pipelines = map[string]P{}
	defer func() {
		if err != nil {
			for _, p := range built.pipelines {
				b.release(p)
			}
			built = builtUnits[P]{}
		}
	}()
	unitErr := map[string]error{}
	kernelErr := map[string]error{}
	for _, u := range shaders.Units {
		lib, err := b.compile(u)
		if err != nil {
			unitErr[u.Name] = err
			if !u.OnlyFallback && u.Fallback == "" { // core: nothing runs without it
				return built, fmt.Errorf("metal: compiling %s (MSL 3.1) on %s: %v", u.What, b.os, err)
			}
			continue
		}
		for _, k := range u.Kernels() {
			p, err := b.pipeline(lib, k)
			if err != nil {
				kernelErr[k] = err
				continue
			}
			built.pipelines[k] = p
		}
		b.free(lib)
	}
	has := func(k string) bool { _, ok := built.pipelines[k]; return ok }
	// why a kernel has no pipeline: its unit's compile error, or its own pipeline's
	why := func(k string) string {
		if err := unitErr[shaders.UnitOf(k)]; err != nil {
			u, _ := shaders.UnitNamed(shaders.UnitOf(k))
			return fmt.Sprintf("%s did not compile: %v", u.What, err)
		}
		return kernelErr[k].Error()
	}
	// Every op must run: each kernel has its pipeline, or its fallback has one, or it is only a
	// fallback.
	onlyFallback := map[string]bool{}
	for _, u := range shaders.Units {
		if u.OnlyFallback {
			for _, k := range u.Kernels() {
				onlyFallback[k] = true
			}
		}
	}
	var missing []string
	for _, k := range shaders.Kernels() {
		if has(k) || onlyFallback[k] {
			continue
		}
		var m string
		switch fb := shaders.FallbackKernel(k); {
		case fb == "":
			m = why(k)
		case !has(fb):
			m = fmt.Sprintf("%s; and its fallback: %s", why(k), why(fb))
		default:
			continue
		}
		if !slices.Contains(missing, m) { // a unit's failure once, not per kernel
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return built, fmt.Errorf("metal: on %s some ops have no kernel: %s", b.os, strings.Join(missing, "; "))
	}
	// What degraded, and what runs instead.
	for _, u := range shaders.Units {
		err := unitErr[u.Name]
		if err == nil {
			continue
		}
		if u.Fallback != "" {
			built.familyErrors = append(built.familyErrors, fmt.Sprintf("%s did not compile on %s: %v; %s",
				u.What, b.os, err, u.Instead))
		} else if primary, ok := u.FallbackFor(); ok {
			built.familyErrors = append(built.familyErrors, fmt.Sprintf("%s (the fallback of %s) did not compile on %s: %v; %s runs, with no fallback",
				u.What, primary.What, b.os, err, primary.What))
		}
	}
	for _, k := range shaders.Kernels() {
		err := kernelErr[k]
		switch {
		case err == nil:
		case strings.HasPrefix(k, "attention_hd"): // selftest adds that the head dim runs the scalar kernel
			built.fallbacks = append(built.fallbacks, err.Error())
		case onlyFallback[k]:
			built.familyErrors = append(built.familyErrors, fmt.Sprintf("%v (a fallback kernel); the kernels it stands in for run", err))
		default:
			built.familyErrors = append(built.familyErrors, fmt.Sprintf("%v; its ops run %s instead", err, shaders.FallbackKernel(k)))
		}
	}
	return built, nil
}

// onceOK makes a value once it can: a success is kept for the life of the process, a failure
// is returned and the next call tries again (a compiler-service hiccup at start-up must not
// disable Metal until the app restarts). Calls wait for one another.
type onceOK[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
	make func() (T, error)
}

func (o *onceOK[T]) get() (T, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return o.v, nil
	}
	v, err := o.make()
	if err != nil {
		var zero T
		return zero, err
	}
	o.v, o.done = v, true
	return v, nil
}

// appleFamilies are the MTLGPUFamilyAppleN values Apple defines, newest first: the
// highest-family probe starts at the newest and never sends a value Apple has not defined.
// darwinkit v0.5.0 lists Apple1 (1001) to Apple7 (1007); Apple8 = 1008 (macOS 13 SDK),
// Apple9 = 1009 (macOS 14), Apple10 = 1010 (macOS 26), Apple11 = 1011 (macOS 27 SDK), from
// Apple's headers.
var appleFamilies = func() []int {
	var fs []int
	for f := 1011; f >= 1001; f-- {
		fs = append(fs, f)
	}
	return fs
}()

// highestAppleFamily names the newest AppleN family supports says yes to ("Apple9"), or "".
func highestAppleFamily(supports func(family int) bool) string {
	for _, f := range appleFamilies {
		if supports(f) {
			return fmt.Sprintf("Apple%d", f-1000)
		}
	}
	return ""
}
