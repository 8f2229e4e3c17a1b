package backend

// registry.go: the compute backends this program has, each declared once by its own folder
// (as engine/model's families are): its name, whether it runs here, and how to make one. What
// `auto` runs and what runs when a backend cannot be made (the fallback, the CPU) are decided
// here, once, for the CLI and the window alike; other code names a backend through the
// registry (Names, FallbackName, Auto) or the backend's own Name constant.
//
// Invariant: a backend that is not available here is never made (New refuses with the reason
// without calling its maker), auto runs the available backend of the highest Preference, and
// exactly one backend, always available, is the fallback. Mutation that would silently break
// it: New calling a maker before asking Available — Metal would be touched in this process
// before a probe child survived it (a crash in the bridge then takes the CPU users down too).

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Auto is the backend setting that runs the best backend available here.
const Auto = "auto"

// Registration is one backend as its folder declares it.
type Registration struct {
	Name  string // the setting's spelling: what --backend and the window's forms say
	Title string // for sentences: "the CPU", "Metal"
	// Preference orders auto's choice: the available backend of the highest runs.
	Preference int
	// Fallback: what runs when another backend cannot be made (one backend, always available).
	Fallback bool
	// Available says whether the backend runs here: nil, or why not (nil func: it always does).
	Available func() error
	// Expected says whether a user here would expect the backend, so running without it is
	// worth a note (nil func: never).
	Expected func() bool
	// Note is said while the backend runs ("" none; nil func: none).
	Note func() string
	// Retry forgets a remembered failure and asks Available again (nil: nothing to retry).
	Retry func() error
	// Make makes one; called only when Available said yes.
	Make func(threads int) (Backend, error)
}

func (r *Registration) available() error {
	if r.Available == nil {
		return nil
	}
	return r.Available()
}

func (r *Registration) expected() bool { return r.Expected != nil && r.Expected() }

func (r *Registration) note() string {
	if r.Note == nil {
		return ""
	}
	return r.Note()
}

// Registry holds the registrations; the package's functions use the program's own (filled by
// the backends' init), tests make their own.
type Registry struct {
	mu   sync.Mutex
	regs []*Registration // by Preference, the highest first
}

var program Registry

// Register adds a backend to the program's registry (a backend folder's init).
func Register(r Registration) { program.Register(r) }

// Register adds r. A name registered twice, a second fallback, or a fallback that may be
// unavailable panics.
func (g *Registry) Register(r Registration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, o := range g.regs {
		switch {
		case o.Name == r.Name:
			panic(fmt.Sprintf("backend: %q registered twice", r.Name))
		case o.Fallback && r.Fallback:
			panic(fmt.Sprintf("backend: %q and %q both registered as the fallback", o.Name, r.Name))
		}
	}
	if r.Fallback && r.Available != nil {
		panic(fmt.Sprintf("backend: the fallback %q must always be available", r.Name))
	}
	g.regs = append(g.regs, &r)
	slices.SortStableFunc(g.regs, func(a, b *Registration) int { return b.Preference - a.Preference })
}

func (g *Registry) lookup(name string) *Registration {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.regs {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (g *Registry) all() []*Registration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.regs)
}

// Names lists the program's backends by name, sorted (for messages and help).
func Names() []string { return program.Names() }

// Names lists the registered backends by name, sorted.
func (g *Registry) Names() []string {
	var names []string
	for _, r := range g.all() {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return names
}

// Choices says the names a setting takes, for messages and help: "cpu or metal", or with
// auto first, "auto, cpu or metal".
func Choices(withAuto bool) string { return program.Choices(withAuto) }

// Choices says the names a setting takes.
func (g *Registry) Choices(withAuto bool) string {
	names := g.Names()
	if withAuto {
		names = append([]string{Auto}, names...)
	}
	return OrList(names)
}

// OrList joins names as a sentence does: "a", "a or b", "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FallbackName is the program's fallback backend (the CPU); it panics when none is
// registered (a program that imports no backend).
func FallbackName() string { return program.FallbackName() }

// FallbackName is the fallback's name.
func (g *Registry) FallbackName() string { return g.fallback().Name }

func (g *Registry) fallback() *Registration {
	for _, r := range g.all() {
		if r.Fallback {
			return r
		}
	}
	panic("backend: no fallback backend registered (import engine/cpu)")
}

// Available says whether the program's backend name runs here: nil, or why not.
func Available(name string) error { return program.Available(name) }

// Available says whether name runs here.
func (g *Registry) Available(name string) error {
	r := g.lookup(name)
	if r == nil {
		return g.unknown(name, false)
	}
	return r.available()
}

func (g *Registry) unknown(name string, withAuto bool) error {
	return fmt.Errorf("backend %q: want %s", name, g.Choices(withAuto))
}

// New makes the program's backend name, after Available said it runs here.
func New(name string, threads int) (Backend, error) { return program.New(name, threads) }

// New makes backend name with threads (the CPU's; 0: every core) once it is available.
func (g *Registry) New(name string, threads int) (Backend, error) {
	r := g.lookup(name)
	if r == nil {
		return nil, g.unknown(name, false)
	}
	if err := r.available(); err != nil {
		return nil, err
	}
	return r.Make(threads)
}

// Resolve turns a backend setting (a name, Auto or "") into the backend to make, with the
// note to say while it runs: what auto passed over that a user here expected, and why
// ("running on the CPU: <why not Metal>"), else the backend's own note.
func Resolve(want string) (name, note string, err error) { return program.Resolve(want) }

// Resolve turns a setting into a backend name and its note.
func (g *Registry) Resolve(want string) (name, note string, err error) {
	if want != Auto && want != "" {
		r := g.lookup(want)
		if r == nil {
			return "", "", g.unknown(want, true)
		}
		if err := r.available(); err != nil {
			return "", "", err
		}
		return r.Name, r.note(), nil
	}
	var missed error // the first backend above the one chosen that a user here expected
	for _, r := range g.all() {
		err := r.available()
		if err == nil {
			if missed != nil {
				return r.Name, fmt.Sprintf("running on %s: %v", r.Title, missed), nil
			}
			return r.Name, r.note(), nil
		}
		if missed == nil && r.expected() {
			missed = err
		}
	}
	return g.FallbackName(), "", nil // unreachable: the fallback is always available
}

// Maker makes a backend by name: the registry's New, or a test's own.
type Maker func(name string, threads int) (Backend, error)

// FallBack decides the one fallback: name was to run and making it failed with err. When name
// is not the fallback and offered says the fallback is, it makes the fallback with make and
// says why (ok); else it gives up (ok false: the caller reports err).
func FallBack(name string, threads int, err error, make Maker, offered func(string) bool) (be Backend, ran, note string, ok bool) {
	return program.FallBack(name, threads, err, make, offered)
}

// FallBack is the one fallback, with this registry's fallback.
func (g *Registry) FallBack(name string, threads int, err error, make Maker, offered func(string) bool) (Backend, string, string, bool) {
	fb := g.FallbackName()
	if name == fb || !offered(fb) {
		return nil, "", "", false
	}
	be, fbErr := make(fb, threads)
	if fbErr != nil {
		return nil, "", "", false
	}
	return be, fb, fmt.Sprintf("%s failed (%v): running on %s", name, err, g.fallback().Title), true
}

// Open makes the backend a setting asks for: Resolve, then New; a backend that auto chose and
// that cannot be made falls back (FallBack). It returns the backend, the name of the one
// made and the note to say while it runs.
func Open(want string, threads int) (Backend, string, string, error) {
	return program.Open(want, threads)
}

// Open makes the backend want asks for.
func (g *Registry) Open(want string, threads int) (Backend, string, string, error) {
	name, note, err := g.Resolve(want)
	if err != nil {
		return nil, "", "", err
	}
	be, err := g.New(name, threads)
	if err != nil && (want == Auto || want == "") {
		if fbe, ran, fnote, ok := g.FallBack(name, threads, err, g.New, func(string) bool { return true }); ok {
			return fbe, ran, fnote, nil
		}
	}
	return be, name, note, err
}

// Offer is what this machine offers a window: the backends available here (auto's choice
// first), why each other one is not, the notes to say while each runs, and how to ask again.
type Offer struct {
	Names       []string          // available, auto's choice first
	Unavailable map[string]string // not available here: name -> why
	Notes       map[string]string // said while a backend runs (Resolve's note for auto's choice)
	// Retry asks again each backend a user here expected and did not get (nil: none to retry).
	Retry func() error
}

// Survey is the program's Offer now.
func Survey() Offer { return program.Survey() }

// Survey is the registry's Offer now.
func (g *Registry) Survey() Offer {
	o := Offer{Unavailable: map[string]string{}, Notes: map[string]string{}}
	var retries []func() error
	for _, r := range g.all() {
		if err := r.available(); err != nil {
			o.Unavailable[r.Name] = err.Error()
			if r.expected() && r.Retry != nil {
				retries = append(retries, r.Retry)
			}
			continue
		}
		o.Names = append(o.Names, r.Name)
		if n := r.note(); n != "" {
			o.Notes[r.Name] = n
		}
	}
	if name, note, err := g.Resolve(Auto); err == nil && note != "" {
		o.Notes[name] = note
	}
	if len(retries) > 0 {
		o.Retry = func() error {
			var first error
			for _, retry := range retries {
				if err := retry(); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
	}
	return o
}
