// The replay driver: ffi_calllayer_test.go writes it, with sigs.go (one replay per message
// the Metal backend sends) and sigs.c (an IMP per message), into a module beside a copy of
// darwinkit's objc and objc/ffi packages, builds it against libffi and runs it.
//
// Each replay sends its message with darwinkit's objc.Call, as the backend does, many times,
// each on a goroutine of its own at another stack depth. While the call is inside C (in
// __wrap_ffi_call, between darwinkit's ffi_prep_cif and libffi's ffi_call), a helper goroutine
// runs on the P the caller left, as any goroutine may: it allocates single guard bytes (0xA5),
// which Go's tiny allocator puts right after a small result slot allocated just before on that
// P, then runs a garbage collection (GODEBUG=clobberfree=1 fills what it frees with
// 0xdeadbeef). In every other call the caller's stack is then moved (standinMoveStack), as it
// may be between darwinkit taking the uintptrs it gives C and the C call. Then libffi runs the
// call on a stand-in IMP that records what it received, unless what it would read is no longer
// what it was given.
//
// The stack moves there and nowhere else, so that what is counted does not depend on timing:
// GODEBUG=gcshrinkstackoff=1 (main checks it) turns off the collector's stack shrinking, which
// would otherwise happen at whatever safe point a preemption finds (a shrink the window's
// collection left pending while the caller was in C, done when the 10 ms time slice runs out:
// on a loaded machine, often, and inside objc.Call), and each call's goroutine starts with
// its stack grown far past what the call needs (onFreshStack), so that no frame before
// standinMoveStack grows it. A move anywhere else is counted (unplanned_moves), and fails the
// test.
//
// Per replay it prints one JSON line: calls, arguments or results that arrived wrong, guard
// bytes within the ffi_arg libffi stores at the result address and how many of those it
// overwrote, calls whose argument types changed between ffi_prep_cif and ffi_call, calls in
// which libffi would have read the stack the goroutine had left.
package main

// #cgo CFLAGS: -std=gnu2x
// #include "standin.h"
import "C"

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"calllayer/gstack"

	"github.com/progrium/darwinkit/objc"
)

type sig struct {
	imp   int    // its IMP in sigs.c
	sel   string // the selector
	shape string // the C kinds, as the audit writes them
	goSig string // the Go types darwinkit sends it with
	at    string // where the backend or darwinkit sends it
	send  func(recv objc.Object) sent
}

// sent is one replayed message: the arguments given to objc.Call, what it returned and
// what the stand-in IMP returned.
type sent struct {
	args      []any
	got, want any
}

type stats struct {
	Sel     string `json:"sel"`
	Shape   string `json:"shape"`
	GoSig   string `json:"go"`
	At      string `json:"at"`
	Calls   int    `json:"calls"`
	Windows int    `json:"windows"` // calls in which the helper ran between prep and call
	// Guard bytes the helper allocated inside [result, result+sizeof(ffi_arg)), where libffi
	// stores a whole ffi_arg for an integer result: they are past darwinkit's slot.
	GuardsNear    int    `json:"guards_near"`
	GuardsHit     int    `json:"guards_hit"`      // of those, overwritten by the call
	CallsClobber  int    `json:"calls_clobbered"` // calls with a guard overwritten
	TypesDead     int    `json:"types_dead"`      // calls whose argument types changed before libffi read them
	NoIMP         int    `json:"imp_not_run"`
	WrongSelfCmd  int    `json:"wrong_self_or_cmd"`
	WrongArgs     int    `json:"wrong_args"`
	WrongResult   int    `json:"wrong_result"`
	Unexpected    int    `json:"unexpected"`
	Moved         int    `json:"calls_moved"` // calls whose stack was moved in the window
	Moves         int    `json:"stack_moves"`
	Unplanned     int    `json:"unplanned_moves"` // calls whose stack moved anywhere else
	Stale         int    `json:"stale_reads"`     // calls in which libffi would read the stack the goroutine left
	StaleWhat     string `json:"stale_what,omitempty"`
	RNarrow       bool   `json:"result_narrower_than_ffi_arg"`
	FirstProblem  string `json:"first_problem,omitempty"`
	FirstTypesMsg string `json:"types_what,omitempty"`
}

var guards atomic.Pointer[[]*byte]

// helper serves the windows __wrap_ffi_call opens. GOMAXPROCS is 1: it runs on the P the
// caller left when it entered C, so its tiny allocations come from the same block as the
// caller's last ones.
func helper() {
	req := (*int32)(unsafe.Pointer(&C.standin_window_req))
	done := (*int32)(unsafe.Pointer(&C.standin_window_done))
	var last int32
	for {
		if r := atomic.LoadInt32(req); r != last {
			last = r
			g := make([]*byte, 15)
			for i := range g {
				b := new(byte)
				*b = 0xA5
				g[i] = b
			}
			guards.Store(&g)
			runtime.GC()
			atomic.StoreInt32(done, r)
		}
		runtime.Gosched()
	}
}

// standinMoveStack moves this goroutine's stack, as it is while darwinkit's call is in C: a
// recursion deeper than the stack grows it, copying it to a new one and freeing the old. Before
// the move, standin_stale says whether what libffi will read lies on the stack being left. It
// returns whether the stack moved (1 or 0).
//
//export standinMoveStack
func standinMoveStack() C.int {
	lo, hi := gstack.Bounds()
	if lo != mark.lo || hi != mark.hi {
		mark.unplanned = true // moved since the replay began: standin_stale would look at the wrong stack
	}
	C.standin_stale(C.uintptr_t(lo), C.uintptr_t(hi))
	if atDepth(2000, func() {}) == 1 { // 2000 frames: ~200 KiB, past the 64 KiB onFreshStack leaves
		return -1000 // never: keeps the result used
	}
	if lo2, hi2 := gstack.Bounds(); lo2 != lo || hi2 != hi {
		mark.lo, mark.hi = lo2, hi2 // the replay's goroutine goes on on the new stack
		return 1
	}
	return 0
}

// mark is the replay goroutine's stack when replay sent the message (lo, hi), and whether it
// moved other than in standinMoveStack.
var mark struct {
	lo, hi    uintptr
	unplanned bool
}

// onFreshStack runs f on a goroutine of its own, its stack grown first to 64 KiB (a call needs
// at most ~16 KiB), and waits for it.
func onFreshStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		growStack()
		f()
	}()
	<-done
}

// growStack grows the stack to hold its 48 KiB frame: to 64 KiB (GODEBUG=adaptivestackstart=0:
// a goroutine starts with the smallest stack), where it stays (gcshrinkstackoff=1).
//
//go:noinline
func growStack() byte {
	var pad [48 << 10]byte
	for i := range pad {
		pad[i] = byte(i)
	}
	return pad[len(pad)-1]
}

// atDepth runs f n frames deeper, so that calls meet the stack's limit at different points.
//
//go:noinline
func atDepth(n int, f func()) byte {
	var pad [40]byte
	pad[n%40] = byte(n)
	if n <= 0 {
		f()
		return pad[0]
	}
	return atDepth(n-1, f) + pad[(n*7)%40]
}

func ptrBytes(p unsafe.Pointer) []byte {
	v := uintptr(p)
	return unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))[:unsafe.Sizeof(v):unsafe.Sizeof(v)]
}

// cBytes is an argument as a C parameter holds it; str is set for an NSString (a C string).
func cBytes(v any) (b []byte, str *string) {
	if v == nil {
		return ptrBytes(nil), nil
	}
	if h, ok := v.(objc.Handle); ok {
		return ptrBytes(h.Ptr()), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		s := rv.String()
		return nil, &s
	case reflect.Bool:
		if rv.Bool() {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case reflect.UnsafePointer, reflect.Pointer:
		return ptrBytes(rv.UnsafePointer()), nil
	}
	// Numbers and structs of numbers: Go's layout is C's here.
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	return bytes.Clone(unsafe.Slice((*byte)(p.UnsafePointer()), rv.Type().Size())), nil
}

func (st *stats) problem(format string, args ...any) {
	if st.FirstProblem == "" {
		st.FirstProblem = fmt.Sprintf(format, args...)
	}
}

func replay(s sig, recv objc.Object, st *stats) {
	C.standin_reset()
	C.standin_expect_imp = C.int(s.imp)
	C.standin_expect_sel = C.CString(s.sel) // kept: a few thousand small strings
	guards.Store(nil)
	mark.lo, mark.hi = gstack.Bounds()
	mark.unplanned = false
	r := s.send(recv)
	if lo, hi := gstack.Bounds(); lo != mark.lo || hi != mark.hi || mark.unplanned {
		st.Unplanned++
	}
	rec := C.standin_rec
	st.Calls++
	st.Windows += int(rec.windows)
	st.TypesDead += int(rec.typesdead)
	st.Unexpected += int(rec.unexpected)
	st.Moves += int(rec.moves)
	if C.standin_move_on != 0 {
		st.Moved++
	}
	st.Stale += int(rec.stale)
	if rec.stale != 0 && st.StaleWhat == "" {
		st.StaleWhat = C.GoString(&rec.stalewhat[0])
	}
	st.RNarrow = rec.rnarrow != 0
	if rec.typesdead != 0 && st.FirstTypesMsg == "" {
		st.FirstTypesMsg = C.GoString(&rec.typeswhat[0])
	}
	if g := guards.Load(); g != nil {
		rv := uintptr(rec.rvalue)
		hit := false
		for _, b := range *g {
			if a := uintptr(unsafe.Pointer(b)); a > rv && a < rv+8 {
				st.GuardsNear++
				if *b != 0xA5 {
					st.GuardsHit++
					hit = true
				}
			}
		}
		if hit {
			st.CallsClobber++
		}
	}
	if int(rec.imp) != s.imp || rec.calls != 1 {
		st.NoIMP++
		st.problem("IMP %d ran %d times (want IMP %d once)", rec.imp, rec.calls, s.imp)
		return
	}
	if rec.self != recv.Ptr() || rec.cmd != objc.Sel(s.sel).Ptr() {
		st.WrongSelfCmd++
		st.problem("self %p _cmd %p, want %p %p", rec.self, rec.cmd, recv.Ptr(), objc.Sel(s.sel).Ptr())
	}
	if int(rec.nargs) != len(r.args) {
		st.WrongArgs++
		st.problem("%d arguments received, %d sent", rec.nargs, len(r.args))
	} else {
		for i, a := range r.args {
			got := C.GoBytes(unsafe.Pointer(&rec.arg[i][0]), rec.argsize[i])
			want, str := cBytes(a)
			if str != nil {
				var p unsafe.Pointer
				if len(got) == int(unsafe.Sizeof(p)) {
					p = *(*unsafe.Pointer)(unsafe.Pointer(&got[0]))
				}
				if p == nil || C.GoString((*C.char)(p)) != *str {
					st.WrongArgs++
					st.problem("argument %d: not the string %q", i, *str)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				st.WrongArgs++
				st.problem("argument %d: received % x, sent % x", i, got, want)
			}
		}
	}
	if !reflect.DeepEqual(r.got, r.want) {
		st.WrongResult++
		st.problem("result %#v, the IMP returned %#v", r.got, r.want)
	}
}

func main() {
	n := flag.Int("n", 32, "calls per message")
	flag.Parse()
	for _, want := range []string{"clobberfree=1", "gcshrinkstackoff=1", "adaptivestackstart=0"} {
		if !strings.Contains(","+os.Getenv("GODEBUG")+",", ","+want+",") {
			fmt.Fprintf(os.Stderr, "the replays need GODEBUG=%s (GODEBUG=%q)\n", want, os.Getenv("GODEBUG"))
			os.Exit(2)
		}
	}
	var here byte
	if lo, hi := gstack.Bounds(); uintptr(unsafe.Pointer(&here)) < lo || uintptr(unsafe.Pointer(&here)) >= hi || hi-lo < 2048 || (hi-lo)&(hi-lo-1) != 0 {
		fmt.Fprintf(os.Stderr, "gstack.Bounds = [%#x, %#x) does not hold a frame at %#x: not g.stack\n", lo, hi, uintptr(unsafe.Pointer(&here)))
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	go helper()
	C.standin_window_on = 1
	recv := objc.ObjectFrom(C.standin_object(0))
	enc := json.NewEncoder(os.Stdout)
	for _, s := range sigs {
		st := &stats{Sel: s.sel, Shape: s.shape, GoSig: s.goSig, At: s.at}
		for i := 0; i < *n; i++ {
			// Every other call moves the stack in the window: those check what libffi reads
			// against the stack left behind, the others let libffi run on what it was given.
			C.standin_move_on = C.int(i % 2)
			onFreshStack(func() { atDepth(i*37%101, func() { replay(s, recv, st) }) })
		}
		if err := enc.Encode(st); err != nil {
			panic(err)
		}
	}
}
