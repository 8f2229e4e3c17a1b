package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
)

// ceiling --json gives a rate per unit and thread count asked, in the order asked.
func TestCeilingCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := realMain([]string{"ceiling", "--threads", "1,2", "--seconds", "0.05", "--json"}, &out, &errb); rc != 0 {
		if strings.Contains(errb.String(), "no FMA or AMX kernel") {
			t.Skip(errb.String())
		}
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	var rates []cpu.UnitRate
	if err := json.Unmarshal(out.Bytes(), &rates); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	units := len(rates) / 2
	if units == 0 || len(rates) != 2*units {
		t.Fatalf("%d rates for 2 thread counts: %+v", len(rates), rates)
	}
	for i, r := range rates {
		if want := 1 + i/units; r.Threads != want || r.Unit != rates[i%units].Unit || !(r.GFLOPsPerThread > 0) {
			t.Errorf("rate %d: %+v, want %d threads, unit %s, a positive rate", i, r, want, rates[i%units].Unit)
		}
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}

func TestCeilingFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ceiling", "--threads", "0"}, "--threads"},
		{[]string{"ceiling", "--threads", "2,x"}, "--threads"},
		{[]string{"ceiling", "--seconds", "0"}, "--seconds 0"},
		{[]string{"ceiling", "--seconds", "NaN"}, "--seconds NaN"},
		{[]string{"ceiling", "extra"}, "extra"},
	} {
		if msg := cliFails(t, c.args...); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q lacks %q", c.args, msg, c.want)
		}
	}
}

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
