// misc_test.go: the small contracts: exp accuracy, buffers, Commit, argument checks.
//
// Invariant: expNeg stays within 1 float32 ulp of math.Exp on the softmax domain; Alloc zeroes;
// Commit reports the time between commits and never fails; a malformed call panics on the
// caller's goroutine (not in a worker, which would kill the process).
// Mutation that would silently break it: an exp polynomial one degree too short (errors of a few
// ulp, invisible at 1e-5 attention tolerance but a drift against the reference).
package cpu

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/internal/numcheck"
)

func TestExpNeg(t *testing.T) {
	worst := int64(0)
	for i := 0; i <= 2_000_000; i++ {
		x := -float32(i) * 5.3e-5 // [-106, 0]
		got, want := expNeg(x), float32(math.Exp(float64(x)))
		if d := numcheck.ULPs(got, want); d > worst {
			worst = d
			if d > 1 {
				t.Fatalf("expNeg(%g) = %g, want %g (%d ulp)", x, got, want, d)
			}
		}
	}
	if expNeg(float32(math.Inf(-1))) != 0 || expNeg(0) != 1 {
		t.Errorf("expNeg edge values: exp(-inf) = %g, exp(0) = %g", expNeg(float32(math.Inf(-1))), expNeg(0))
	}
	if x := expNeg(float32(math.NaN())); x == x {
		t.Errorf("expNeg(NaN) = %g, want NaN", x)
	}
}

func TestBuffersAndCommit(t *testing.T) {
	be := New(0)
	defer be.Close()
	if be.Threads() < 1 {
		t.Fatalf("Threads() = %d", be.Threads())
	}
	buf, err := be.Alloc(10)
	if err != nil || buf.Len() != 10 {
		t.Fatalf("Alloc(10) = %v, %v", buf, err)
	}
	v := backend.View{Buf: buf}
	for _, x := range floats(v) {
		if x != 0 {
			t.Fatal("Alloc does not zero")
		}
	}
	be.Upload(v.At(3), []float32{1, 2})
	if f := floats(v.At(2)); f[0] != 0 || f[1] != 1 || f[2] != 2 || f[3] != 0 {
		t.Errorf("Upload at offset 3: %v", floats(v))
	}
	if _, err := be.Alloc(-1); err == nil {
		t.Error("Alloc(-1) succeeded")
	}
	be.Free(buf)
	if buf.Len() != 0 {
		t.Error("Free kept the memory")
	}
	be.Commit()
	time.Sleep(20 * time.Millisecond)
	d, err := be.Commit()
	if err != nil || d < 20*time.Millisecond || d > 5*time.Second {
		t.Errorf("Commit after 20ms = %v, %v", d, err)
	}
}

// mustPanic runs f and returns the panic message, failing if there was none.
func mustPanic(t *testing.T, what string, f func()) string {
	t.Helper()
	msg := ""
	func() {
		defer func() {
			if r := recover(); r != nil {
				msg = strings.TrimSpace(strings.ReplaceAll(strings.ToLower(toString(r)), "\n", " "))
			}
		}()
		f()
	}()
	if msg == "" {
		t.Errorf("%s: no panic", what)
	}
	return msg
}

func toString(r any) string {
	if e, ok := r.(error); ok {
		return e.Error()
	}
	if s, ok := r.(string); ok {
		return s
	}
	return "panic"
}

func TestBadCallsPanicOnCaller(t *testing.T) {
	be := New(3)
	defer be.Close()
	x := conformance.Alloc(be, 100)
	y := conformance.Alloc(be, 100)
	w, _ := testSuite.Weight("w", make([]float32, 12), dtype.BF16, 0, 3, 4)
	bad := w
	bad.DType = dtype.I32
	mustPanic(t, "MatMul wrong weight size", func() { be.MatMul(y, x, w, backend.Weight{}, 2, 5, 3) })
	mustPanic(t, "MatMul int weight", func() { be.MatMul(y, x, bad, backend.Weight{}, 2, 4, 3) })
	mustPanic(t, "MatMul y beyond buffer", func() { be.MatMul(y.At(95), x, w, backend.Weight{}, 2, 4, 3) })
	mustPanic(t, "MatMul in place", func() { be.MatMul(x.At(4), x, w, backend.Weight{}, 2, 4, 3) })
	mustPanic(t, "Rope odd headDim", func() { be.Rope2D(x, 3, y, y, 2, 1, 3) })
	mustPanic(t, "Attention overlapping segments", func() {
		be.Attention(y, x, x, x, 4, []backend.Segment{{Start: 0, End: 3}, {Start: 2, End: 4}}, 1, 4, 1)
	})
	mustPanic(t, "GELU unknown form", func() { be.GELU(x, 10, backend.GELUForm(7)) })
	// The pool still works after a panic.
	be.MatMul(y, x, w, backend.Weight{}, 2, 4, 3)
}
