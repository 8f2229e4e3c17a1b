// helpers_test.go: what the op tests share. Weights, inputs and references come from
// engine/conformance, the table every backend runs (TestOpParity runs it here).
package cpu

import (
	"github.com/turbospark/inspector/engine/conformance"
)

// testSuite holds the weights the tests make, for the whole test binary.
var testSuite = conformance.NewSuite()

// parityOK is THE parity check of the tests; the mutation test calls it on wrong variants.
func parityOK(got []float32, want []float64, tol float64) (float64, bool) {
	d := conformance.RelDiff(got, want)
	return d, d <= tol
}
