package conformance_test

// The table must hold: a backend with one op broken fails that op's cases (and only those).
// (engine/cpu's TestOpParity runs the whole table on the CPU backend.)

import (
	"math"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/cpu"
)

func newCPU(threads int) func() (backend.Backend, error) {
	return func() (backend.Backend, error) { return cpu.New(threads), nil }
}

// broken is the CPU backend with one op changed the way a wrong kernel would be.
type broken struct {
	*cpu.Backend
	op string
}

func (b broken) GELU(x backend.View, n int, form backend.GELUForm) {
	if b.op == "gelu" {
		form = 1 - form // the other form
	}
	b.Backend.GELU(x, n, form)
}

func (b broken) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	if b.op == "attention" {
		segs = []backend.Segment{{Start: segs[0].Start, End: segs[len(segs)-1].End}} // across segments
	}
	b.Backend.Attention(o, q, k, v, stride, segs, heads, headDim, scale)
}

func (b broken) Rope2D(x backend.View, stride int, cos, sin backend.View, seq, heads, headDim int) {
	if b.op == "rope" {
		cos, sin = sin, cos
	}
	b.Backend.Rope2D(x, stride, cos, sin, seq, heads, headDim)
}

func (b broken) MatMul(y, x backend.View, w, bias backend.Weight, rows, in, out int) {
	if b.op == "matmul" {
		bias = backend.Weight{} // the bias dropped
	}
	b.Backend.MatMul(y, x, w, bias, rows, in, out)
}

func (b broken) LayerNorm(out, x backend.View, w, bias backend.Weight, rows, cols int, eps float32) {
	if b.op == "layer_norm" {
		eps = 1 // a wrong epsilon
	}
	b.Backend.LayerNorm(out, x, w, bias, rows, cols, eps)
}

func (b broken) Add(dst, src backend.View, n int) {
	if b.op == "add" {
		n-- // the last element left out
	}
	b.Backend.Add(dst, src, n)
}

// stray is the CPU backend with one op that, after computing its output, writes where it
// must not or leaves a non-finite value in it — as a GPU kernel with a wrong grid or a
// missing bounds check would.
type stray struct {
	*cpu.Backend
	how string // "past", "before", "nan", "inf"
}

func (b stray) GELU(x backend.View, n int, form backend.GELUForm) {
	b.Backend.GELU(x, n, form)
	switch b.how {
	case "past":
		b.Upload(x.At(n), []float32{0.5})
	case "before":
		b.Upload(x.At(-1), []float32{0.5})
	case "nan":
		b.Upload(x.At(n/2), []float32{float32(math.NaN())})
	case "inf":
		b.Upload(x.At(n-1), []float32{float32(math.Inf(1))})
	}
}

// An op that writes beside its output or computes NaN or Inf fails every case of it with a
// sentence saying so, whatever its relative error would say; no other op's case fails.
func TestStrayWritesAndNonFiniteOutputsFail(t *testing.T) {
	for _, c := range []struct{ how, says string }{
		{"past", "wrote outside its output (1 after the end"},
		{"before", "wrote outside its output (1 before the start"},
		{"nan", "the output holds NaN (1 of "},
		{"inf", "the output holds +Inf (1 of "},
	} {
		t.Run(c.how, func(t *testing.T) {
			res, err := conformance.Run(func() (backend.Backend, error) { return stray{cpu.New(1), c.how}, nil })
			if err != nil {
				t.Fatal(err)
			}
			failed := 0
			for _, r := range res {
				gelu := strings.HasPrefix(r.Name, "GELU/")
				if gelu && (r.OK() || !strings.Contains(r.Defect, c.says) || !math.IsInf(r.RelErr, 1)) {
					t.Errorf("%s: ok %v, defect %q, rel %g; want %q", r.Name, r.OK(), r.Defect, r.RelErr, c.says)
				}
				if !gelu && !r.OK() {
					t.Errorf("%s failed with only GELU stray: %q %v", r.Name, r.Defect, r.Err)
				}
				if !r.OK() {
					failed++
				}
			}
			if failed == 0 {
				t.Error("no case failed")
			}
		})
	}
}

func TestNonFiniteNamesWhat(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		got  []float32
		want string
	}{
		{[]float32{1, 2}, ""},
		{[]float32{1, nan, 3, nan}, "the output holds NaN (2 of 4 values, the first at element 1)"},
		{[]float32{-inf, 0, inf}, "the output holds +Inf and -Inf (2 of 3 values, the first at element 0)"},
	} {
		if got := conformance.NonFinite(c.got); got != c.want {
			t.Errorf("NonFinite(%v) = %q, want %q", c.got, got, c.want)
		}
	}
}

func TestBrokenOpsFail(t *testing.T) {
	prefix := map[string]string{"gelu": "GELU/", "attention": "Attention/", "rope": "Rope2D/", "matmul": "MatMul/", "layer_norm": "LayerNorm/", "add": "Add/"}
	for _, op := range []string{"gelu", "attention", "rope", "matmul", "layer_norm", "add"} {
		t.Run(op, func(t *testing.T) {
			res, err := conformance.Run(func() (backend.Backend, error) { return broken{cpu.New(1), op}, nil })
			if err != nil {
				t.Fatal(err)
			}
			failed := 0
			for _, r := range res {
				ofOp := strings.HasPrefix(strings.TrimPrefix(r.Name, "Split/"), prefix[op])
				if !r.OK() {
					failed++
					t.Logf("%s fails: rel %.3g", r.Name, r.RelErr)
				}
				if !ofOp && !r.OK() {
					t.Errorf("%s failed with only %s broken", r.Name, op)
				}
			}
			if failed == 0 {
				t.Errorf("no case failed with %s broken", op)
			}
		})
	}
}

// Time gives every op of a block a positive time, and the matmuls their FLOP count.
func TestTime(t *testing.T) {
	sh := conformance.Shape{Hidden: 64, Heads: 4, Intermediate: 96, Patches: 50}
	ts, err := conformance.Time(newCPU(1), sh)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 9 {
		t.Fatalf("%d ops timed, want the 9 of a block", len(ts))
	}
	for _, tm := range ts {
		if tm.Err != nil || tm.Time <= 0 {
			t.Errorf("%s: %v, %v", tm.Name, tm.Time, tm.Err)
		}
		if strings.HasPrefix(tm.Name, "matmul fc1") && tm.FLOPs != 2*50*64*96 {
			t.Errorf("%s: %g FLOPs, want %d", tm.Name, tm.FLOPs, 2*50*64*96)
		}
	}
}
