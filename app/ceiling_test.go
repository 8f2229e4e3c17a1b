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
