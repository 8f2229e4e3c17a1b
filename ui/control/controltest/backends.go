// Package controltest holds the stand-in backends the window's tests run on (ui's and
// ui/control's): the CPU engine with every pass made to last a while, so that a run is long
// enough to be cancelled, stepped by hand or compared beside, and optionally with one
// patch's outputs nudged, so that two settings differ where a test knows. Test code only:
// nothing outside the tests imports it.
//
// Invariant: a SlowCPU computes exactly the CPU backend's numbers (but the nudged patch's),
// only later. The mutation that would silently break it: sleeping inside a MatMul instead of
// at Commit — the timings the tests compare would then hold the sleep inside the ops.
package controltest

import (
	"sync/atomic"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/ui/control"
)

// SlowCPU is the CPU backend with every pass made to last at least Delay (so a run takes
// long enough to be interrupted), and optionally one patch's rows nudged in every MatMul.
type SlowCPU struct {
	*cpu.Backend
	Delay  time.Duration
	Nudge  int          // patch whose MatMul output rows get +1e-3 (-1: none)
	InPass *atomic.Bool // when set: true while a pass is committed (the engine's work)
}

// Commit sleeps Delay, then commits the pass.
func (b SlowCPU) Commit() (time.Duration, error) {
	if b.InPass != nil {
		b.InPass.Store(true)
		defer b.InPass.Store(false)
	}
	time.Sleep(b.Delay)
	return b.Backend.Commit()
}

// MatMul is the CPU's, with the nudged patch's rows moved by 1e-3.
func (b SlowCPU) MatMul(y, x backend.View, w, bias backend.Weight, rows, in, out int) {
	b.Backend.MatMul(y, x, w, bias, rows, in, out)
	if b.Nudge >= 0 && b.Nudge < rows {
		row := make([]float32, out)
		b.Download(row, y.At(b.Nudge*out))
		for i := range row {
			row[i] += 1e-3
		}
		b.Upload(y.At(b.Nudge*out), row)
	}
}

// MatMulEpilogue keeps the nudge where the graph's products go: MatMul (nudged), then the
// epilogue as separate ops.
func (b SlowCPU) MatMulEpilogue(y, x backend.View, w, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	b.MatMul(y, x, w, bias, rows, in, out)
	backend.ApplyEpilogue(b, y, rows*out, ep)
}

// SlowBackends offers the CPU (cpu.Name) and "nudged", both SlowCPU with delay; patch nudge's rows are
// nudged on the backend named nudgeIn.
func SlowBackends(delay time.Duration, nudgeIn string, nudge int) control.Backends {
	return control.Backends{Names: []string{cpu.Name, "nudged"}, New: func(name string, threads int) (backend.Backend, error) {
		be := SlowCPU{Backend: cpu.New(threads), Delay: delay, Nudge: -1}
		if name == nudgeIn {
			be.Nudge = nudge
		}
		return be, nil
	}}
}
