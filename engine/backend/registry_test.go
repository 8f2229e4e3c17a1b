package backend

// registry_test.go: the registry's decisions on a registry of stand-ins (a fallback that is
// always there and a preferred backend whose availability the test sets), so that auto, the
// notes, the one fallback and the rule "never made unless available" are pinned whatever
// machine runs them.

import (
	"errors"
	"strings"
	"testing"
)

// fakeBackend is a Backend that is only its name (the registry never calls its methods).
type fakeBackend struct {
	Backend
	name string
}

// fakeMachine is a registry with "slow" (the fallback) and "fast" (preferred), and what the
// test set about fast: why it is unavailable (nil: it runs), whether a user expects it, and
// whether making it fails; made counts fast's makes.
type fakeMachine struct {
	reg      Registry
	why      error
	expected bool
	makeErr  error
	made     int
	retried  int
}

func newFakeMachine() *fakeMachine {
	m := &fakeMachine{}
	m.reg.Register(Registration{Name: "slow", Title: "the slow one", Fallback: true,
		Make: func(int) (Backend, error) { return fakeBackend{name: "slow"}, nil }})
	m.reg.Register(Registration{Name: "fast", Title: "Fast", Preference: 1,
		Available: func() error { return m.why },
		Expected:  func() bool { return m.expected },
		Note:      func() string { return "fast runs its fallback kernels" },
		Retry:     func() error { m.retried++; m.why = nil; return nil },
		Make: func(int) (Backend, error) {
			m.made++
			if m.makeErr != nil {
				return nil, m.makeErr
			}
			return fakeBackend{name: "fast"}, nil
		}})
	return m
}

func TestAutoPicksTheBestAvailable(t *testing.T) {
	m := newFakeMachine()
	if name, note, err := m.reg.Resolve(Auto); err != nil || name != "fast" || note != "fast runs its fallback kernels" {
		t.Errorf("fast available: auto gave %q, %q, %v", name, note, err)
	}
	m.why = errors.New("no device")
	if name, note, err := m.reg.Resolve(""); err != nil || name != "slow" || note != "" {
		t.Errorf("fast unavailable, not expected: auto gave %q, note %q, %v (want the fallback, silently)", name, note, err)
	}
	m.expected = true
	if name, note, err := m.reg.Resolve(Auto); err != nil || name != "slow" || note != "running on the slow one: no device" {
		t.Errorf("fast unavailable where expected: auto gave %q, note %q, %v", name, note, err)
	}
	if _, _, err := m.reg.Resolve("fast"); err == nil || err.Error() != "no device" {
		t.Errorf("fast asked for by name where it does not run: %v, want its reason", err)
	}
	if _, _, err := m.reg.Resolve("cuda"); err == nil || !strings.Contains(err.Error(), `backend "cuda": want auto, fast or slow`) {
		t.Errorf("an unknown name: %v", err)
	}
}

// The invariant: an unavailable backend is never made, whichever way it is asked for.
func TestUnavailableIsNeverMade(t *testing.T) {
	m := newFakeMachine()
	m.why = errors.New("the probe child crashed")
	if _, err := m.reg.New("fast", 1); err == nil || err.Error() != "the probe child crashed" {
		t.Errorf("New of an unavailable backend: %v", err)
	}
	if be, name, _, err := m.reg.Open(Auto, 1); err != nil || name != "slow" || be.(fakeBackend).name != "slow" {
		t.Errorf("auto: %v %q %v", be, name, err)
	}
	if _, _, _, err := m.reg.Open("fast", 1); err == nil {
		t.Error("fast by name where it does not run: no error")
	}
	if m.made != 0 {
		t.Errorf("the unavailable backend was made %d times", m.made)
	}
	if _, err := m.reg.New("cuda", 1); err == nil || !strings.Contains(err.Error(), "want fast or slow") {
		t.Errorf("New of an unknown name: %v", err)
	}
}

// The one fallback: auto falls back when its choice cannot be made, a backend named by the
// user does not (the CLI reports it), and the fallback itself has nothing to fall back to.
func TestFallBack(t *testing.T) {
	m := newFakeMachine()
	m.makeErr = errors.New("the GPU is busy")
	be, name, note, err := m.reg.Open(Auto, 1)
	if err != nil || name != "slow" || be.(fakeBackend).name != "slow" || note != "fast failed (the GPU is busy): running on the slow one" {
		t.Errorf("auto, fast cannot be made: %v %q %q %v", be, name, note, err)
	}
	if _, name, _, err := m.reg.Open("fast", 1); err == nil || name != "fast" {
		t.Errorf("fast by name, cannot be made: %q %v (want fast's error)", name, err)
	}
	offered := func(string) bool { return true }
	if _, _, _, ok := m.reg.FallBack("slow", 1, errors.New("x"), m.reg.New, offered); ok {
		t.Error("the fallback fell back to itself")
	}
	if _, _, _, ok := m.reg.FallBack("fast", 1, errors.New("x"), m.reg.New, func(n string) bool { return n != "slow" }); ok {
		t.Error("fell back to a fallback that is not offered")
	}
	failing := func(string, int) (Backend, error) { return nil, errors.New("no memory") }
	if _, _, _, ok := m.reg.FallBack("fast", 1, errors.New("x"), failing, offered); ok {
		t.Error("fell back to a fallback that could not be made")
	}
}

func TestSurvey(t *testing.T) {
	m := newFakeMachine()
	o := m.reg.Survey()
	if strings.Join(o.Names, ",") != "fast,slow" || len(o.Unavailable) != 0 || o.Notes["fast"] == "" || o.Notes["slow"] != "" || o.Retry != nil {
		t.Errorf("fast available: %+v", o)
	}
	m.why = errors.New("no device")
	o = m.reg.Survey()
	if strings.Join(o.Names, ",") != "slow" || o.Unavailable["fast"] != "no device" || o.Notes["slow"] != "" || o.Retry != nil {
		t.Errorf("fast unavailable, not expected: %+v (nothing to say, nothing to retry)", o)
	}
	m.expected = true
	o = m.reg.Survey()
	if o.Notes["slow"] != "running on the slow one: no device" || o.Retry == nil {
		t.Fatalf("fast unavailable where expected: %+v", o)
	}
	if err := o.Retry(); err != nil || m.retried != 1 {
		t.Errorf("retry: %v, %d retries", err, m.retried)
	}
	if o = m.reg.Survey(); strings.Join(o.Names, ",") != "fast,slow" {
		t.Errorf("after a retry that worked: %+v", o)
	}
}

func TestRegisterRefuses(t *testing.T) {
	for _, c := range []struct {
		what string
		r    Registration
	}{
		{"a name twice", Registration{Name: "fast"}},
		{"a second fallback", Registration{Name: "other", Fallback: true}},
		{"a fallback that may be unavailable", Registration{Name: "x", Available: func() error { return nil }, Fallback: true}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s was registered", c.what)
				}
			}()
			reg := &newFakeMachine().reg
			if c.what == "a fallback that may be unavailable" {
				reg = &Registry{}
			}
			reg.Register(c.r)
		}()
	}
}

func TestChoices(t *testing.T) {
	m := newFakeMachine()
	if got := m.reg.Choices(true); got != "auto, fast or slow" {
		t.Errorf("Choices(true) = %q", got)
	}
	if got := OrList([]string{"a"}); got != "a" {
		t.Errorf("OrList of one = %q", got)
	}
}
