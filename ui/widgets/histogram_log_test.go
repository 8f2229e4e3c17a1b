package widgets

import "testing"

// On a log y axis a bin of 10 beside one of 100,000 stands well above the one-unit floor it
// gets linearly; the largest is full height either way.
func TestHistogramLogY(t *testing.T) {
	const ph = 200
	if got := histBarHeight(10, 100000, ph, false); got != 1 {
		t.Errorf("linear: a bin of 10 is %v units tall, want the 1-unit floor", got)
	}
	if got := histBarHeight(10, 100000, ph, true); got < 35 || got > 45 {
		t.Errorf("log: a bin of 10 is %v units tall, want log(11)/log(100001) of %d = ~42", got, ph)
	}
	for _, logY := range []bool{false, true} {
		if got := histBarHeight(100000, 100000, ph, logY); got != ph {
			t.Errorf("logY %v: the largest bin is %v tall", logY, got)
		}
	}
	h := NewHistogram()
	h.SetLogY(true)
	if !h.LogY() {
		t.Error("SetLogY did not take")
	}
}
