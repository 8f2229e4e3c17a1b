package selftest

import (
	"slices"
	"testing"
)

// The children this program starts are children the test binary runs as the program: IsChild
// knows every spelling of their command lines, and the lines the parents start.
func TestChildCommandsAreDispatched(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"metal-probe"}, true},
		{[]string{"selftest", "--metal-child", "3", "--no-times"}, true},
		{[]string{"selftest", "--metal-child=0"}, true},
		{[]string{"selftest", "--no-times"}, false},
		{[]string{"-test.run", "TestX"}, false},
		{nil, false},
	} {
		if got := IsChild(c.args); got != c.want {
			t.Errorf("IsChild(%q) = %v", c.args, got)
		}
	}
	for _, args := range [][]string{probeArgs(), sectionArgs(0, false), sectionArgs(7, true)} {
		if !IsChild(args) {
			t.Errorf("a parent starts %q, which IsChild does not know", args)
		}
	}
	if !slices.Equal(sectionArgs(7, true), []string{"selftest", "--metal-child", "7", "--no-times"}) {
		t.Errorf("sectionArgs(7, true) = %q", sectionArgs(7, true))
	}
}
