package conformance_test

// The table must hold: a backend with one op broken fails that op's cases (and only those).
// (engine/cpu's TestOpParity runs the whole table on the CPU backend.)

import (
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
