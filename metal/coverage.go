package metal

// coverage.go: which conformance cases run which kernel of the library. The conformance table
// is what `selftest` and `go test ./metal` run against float64 references on a Mac; a kernel
// no case dispatches is a kernel a Mac never checks. The engine's own dispatch choice decides
// which kernel a case runs (the 64- or 32-row matmul by grid size, flash or scalar attention
// by head dim), so the map is made by running the table through the backend over the modelled
// GPU, which encodes the real dispatches and executes nothing: any machine gives the map a Mac
// would run.
//
// Invariant: the map comes from the dispatches the backend actually encoded for each case,
// never from the case's name. Mutation that would silently break it: naming the kernel from
// the op (every MatMul case "matmul_<dtype>") — the 64-row kernels would look covered while
// no case reaches 240 tiles.

import (
	"fmt"
	"sort"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/shaders"
)

// Coverage maps every kernel function of the library (shaders.Kernels) to the conformance
// cases that dispatch it, in table order; a kernel no case dispatches maps to an empty list.
// It also returns how many command buffers each case committed (the watchdog's cut passes).
func Coverage() (cov map[string][]string, passes map[string]int, err error) {
	cov, passes = map[string][]string{}, map[string]int{}
	for _, k := range shaders.Kernels() {
		cov[k] = nil
	}
	be, log := NewModel(slowestGPU)
	s := conformance.NewSuite()
	defer s.Close()
	defer be.Close()
	for _, c := range conformance.Cases() {
		mark, before := log.Mark(), log.Passes
		if r := c.Check(s, backend.Backend(be)); r.Err != nil {
			return nil, nil, fmt.Errorf("coverage: case %s on the model backend: %v", c.Name, r.Err)
		}
		seen := map[string]bool{}
		for _, rec := range log.Records[mark:] {
			if !seen[rec.Kernel] {
				seen[rec.Kernel] = true
				cov[rec.Kernel] = append(cov[rec.Kernel], c.Name)
			}
		}
		passes[c.Name] = log.Passes - before
	}
	return cov, passes, nil
}

// Uncovered lists, sorted, the kernels of cov no case dispatches.
func Uncovered(cov map[string][]string) []string {
	var out []string
	for k, cases := range cov {
		if len(cases) == 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
