package metal

import (
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/shaders"
)

// Every kernel of the library is dispatched by some conformance case, so a Mac's selftest
// checks each against the float64 references; and the watchdog's split paths run in the
// table too (a query range starting inside a segment, command buffers cut between dispatches).
func TestEveryKernelIsCovered(t *testing.T) {
	cov, passes, err := Coverage()
	if err != nil {
		t.Fatal(err)
	}
	if len(cov) != len(shaders.Kernels()) {
		t.Errorf("%d kernels in the map, %d in the library", len(cov), len(shaders.Kernels()))
	}
	if un := Uncovered(cov); len(un) > 0 {
		t.Errorf("kernels no conformance case dispatches: %v", un)
	}
	split := 0
	for name, n := range passes {
		if strings.HasPrefix(name, "Split/") {
			split++
			if n < 3 {
				t.Errorf("%s committed %d command buffers: the watchdog did not cut it", name, n)
			}
		}
	}
	if split == 0 {
		t.Error("no Split/ case: the watchdog's split paths never run in the table")
	}
	for k, cases := range cov {
		t.Logf("%-18s %3d cases, e.g. %s", k, len(cases), first(cases))
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return s[0]
}

// Every dispatch of the table runs with the threadgroup size shaders.ThreadgroupSize declares
// for its kernel: the pipeline check at build time (gpu_darwin.go: a pipeline allowing fewer
// threads than declared disables Metal) reads the declaration, so a kernel declared wider than
// it runs would turn Metal off on a GPU that runs it fine, and one declared narrower would pass
// the check and fail at its first dispatch.
func TestDispatchWidthIsDeclared(t *testing.T) {
	be, log := NewModel(slowestGPU)
	defer be.Close()
	s := conformance.NewSuite()
	defer s.Close()
	for _, c := range conformance.Cases() {
		if r := c.Check(s, be); r.Err != nil {
			t.Fatalf("%s: %v", c.Name, r.Err)
		}
	}
	seen := map[string]bool{}
	for _, r := range log.Records {
		if want := shaders.ThreadgroupSize(r.Kernel); r.Threads != want && !seen[r.Kernel] {
			seen[r.Kernel] = true
			t.Errorf("%s is dispatched with %d threads per threadgroup; shaders.ThreadgroupSize says %d", r.Kernel, r.Threads, want)
		}
	}
}
