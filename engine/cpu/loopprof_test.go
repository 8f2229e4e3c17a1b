package cpu

import (
	"strings"
	"testing"
	"time"
)

// The loop profile's accounting: a loop whose one long task keeps three of four threads
// waiting stands three quarters idle; one whose eight tasks share the time evenly stands near
// none (a task timed from the loop's start instead of its own would make it busier than four
// threads can be); each site is named by the op's file and line, and a profile off is nil.
// The tasks sleep (no CPU), so the shares hold on a loaded machine: a sleep that runs long
// lengthens the task and the loop alike.
func TestLoopProfileIdle(t *testing.T) {
	b := New(4)
	defer b.Close()
	if b.LoopProfile() != nil {
		t.Fatal("a profile before ProfileLoops(true)")
	}
	b.ProfileLoops(true)
	b.parallel(4, func(_, task int) { // one long task
		if task == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	})
	for range 2 { // even tasks, two a thread (each timed from its own start), two loops at one site
		b.parallel(8, func(_, _ int) { time.Sleep(25 * time.Millisecond) })
	}
	prof := b.LoopProfile()
	if len(prof) != 2 {
		t.Fatalf("%d sites, want 2: %+v", len(prof), prof)
	}
	for _, s := range prof {
		if !strings.HasPrefix(s.Site, "loopprof_test.go:") || !strings.Contains(s.Site, "TestLoopProfileIdle") {
			t.Errorf("site %q, want this file and test", s.Site)
		}
		if s.Busy <= 0 || s.Busy > 4*s.Wall {
			t.Errorf("%s: busy %v of wall %v on 4 threads", s.Site, s.Busy, s.Wall)
		}
	}
	even, uneven := prof[0], prof[1] // the most wall first: the uneven loop (~100 ms), the two even ones (~100 ms)
	if even.Loops != 2 {
		even, uneven = uneven, even
	}
	if even.Loops != 2 || even.Tasks != 16 || uneven.Loops != 1 || uneven.Tasks != 4 {
		t.Fatalf("loops and tasks: %+v, %+v", even, uneven)
	}
	// (the bounds leave room for a worker goroutine started 10-20 ms late on a loaded machine)
	if !(uneven.Idle > 0.7 && uneven.Idle < 0.82) {
		t.Errorf("one 100 ms task of four on four threads: idle %.3f, want about 0.75", uneven.Idle)
	}
	if !(even.Idle >= 0 && even.Idle < 0.35) {
		t.Errorf("eight 25 ms tasks on four threads: idle %.3f, want near 0", even.Idle)
	}
	b.ProfileLoops(false)
	if b.LoopProfile() != nil {
		t.Error("a profile after ProfileLoops(false)")
	}
}
