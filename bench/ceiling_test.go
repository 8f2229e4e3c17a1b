package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
)

// The table's speed-up is each unit's all-thread rate over its own fewest threads' in the same
// call: a unit whose per-thread rate halves from 2 to 16 threads gains 4x, not 8x.
func TestCeilingTable(t *testing.T) {
	var out bytes.Buffer
	printCeiling(&out, []cpu.UnitRate{
		{Unit: "fma6x32", Threads: 2, GFLOPsPerThread: 150},
		{Unit: "amx", Threads: 2, GFLOPsPerThread: 500},
		{Unit: "fma6x32", Threads: 16, GFLOPsPerThread: 75},
		{Unit: "amx", Threads: 16, GFLOPsPerThread: 100},
	})
	for _, want := range []string{
		"fma6x32       16              75.0     1200      4.00",
		"amx       16             100.0     1600      1.60",
		"amx        2             500.0     1000      1.00",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}
