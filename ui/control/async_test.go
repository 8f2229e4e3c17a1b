package control

import (
	"context"
	"testing"
	"time"
)

// startWithin hands a result that comes within the wait to the caller (and never to land),
// and returns without one that does not, however long it takes, landing it later exactly
// once. Catches: a wait that lasts as long as the computation (the window would stall for
// a shared scale over 27 blocks), a result delivered twice (inline and through land), a
// quick result that waits for the next frame.
func TestStartWithinWaitsOnlyItsBudget(t *testing.T) {
	h := newTestHost(t)
	var l Latest
	landed := 0
	land := func(v any, err error) { landed++ }

	v, err, done := l.StartWithin(h, time.Minute, func(context.Context) (any, error) { return 42, nil }, land)
	if !done || err != nil || v != 42 {
		t.Fatalf("a quick result: %v, %v, done %v; want 42 in the call", v, err, done)
	}
	if l.Busy() {
		t.Error("a result taken in the call leaves the job busy")
	}

	release := make(chan struct{})
	returned := make(chan bool, 1)
	go func() { // the UI goroutine's call: the test goroutine only pumps until it returns
		_, _, done := l.StartWithin(h, time.Millisecond, func(context.Context) (any, error) {
			<-release // longer than any wait
			return 7, nil
		}, func(v any, err error) {
			if v != 7 {
				t.Errorf("landed %v, want 7", v)
			}
			land(v, err)
		})
		returned <- done
	}()
	select {
	case done := <-returned:
		if done {
			t.Fatal("a result that had not come was returned as done")
		}
	case <-time.After(pumpDeadline):
		close(release)
		t.Fatal("startWithin waited for the computation")
	}
	if !l.Busy() {
		t.Error("a computation in flight is not busy")
	}
	close(release)
	h.pump("the late result", func() bool { return landed > 0 })
	h.drain()
	if landed != 1 || l.Busy() {
		t.Errorf("the late result landed %d times (busy %v), want once", landed, l.Busy())
	}
}
