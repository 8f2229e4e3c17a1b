package tower

import (
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
)

// packingBackend reports a fixed packing time for every MatMul and computes nothing.
type packingBackend struct {
	backend.Backend
	pending time.Duration
}

func (p *packingBackend) MatMul(y, x backend.View, w, bias backend.Weight, rows, in, out int) {
	p.pending += time.Hour
}

func (p *packingBackend) TakePackTime() time.Duration {
	d := p.pending
	p.pending = 0
	return d
}

// The op timer books what the backend says it spent packing as "pack" and only the rest of
// the call as "matmul": the two add up to the call's own time, nothing counted twice. (The fake
// reports an hour of packing in a call that takes microseconds, so a "matmul" that kept the
// packing would exceed the time the test measured around the call.)
func TestOpTimerSeparatesPacking(t *testing.T) {
	o := newOpTimer(&packingBackend{})
	start := time.Now()
	o.MatMul(backend.View{}, backend.View{}, backend.Weight{}, backend.Weight{}, 1, 1, 1)
	elapsed := time.Since(start)
	times := o.take()
	if times["pack"] != time.Hour {
		t.Errorf("pack %v, want the backend's hour", times["pack"])
	}
	if sum := times["pack"] + times["matmul"]; sum > elapsed || sum < 0 {
		t.Errorf("pack + matmul = %v; the call took %v", sum, elapsed)
	}
}
