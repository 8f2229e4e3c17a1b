// parity_test.go: the conformance table (engine/conformance) on this backend, once per
// MatMul kernel (generic, and AVX2+FMA where the CPU has it).
//
// Invariant: every case of the table passes on 3 threads against the float64 references.
// Mutation that would silently break it: running only the cases that happen to pass.
package cpu

import (
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
)

func TestOpParity(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		res, err := conformance.Run(func() (backend.Backend, error) { return New(3), nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(conformance.Cases()) {
			t.Fatalf("%d results for %d cases", len(res), len(conformance.Cases()))
		}
		for _, r := range res {
			if !r.OK() {
				t.Errorf("%s: RelDiff %.3g > tol %.0g (%v)", r.Name, r.RelErr, r.Tol, r.Err)
			}
		}
	})
}
