//go:build linux

package harness_test

// harness_test.go: the harness itself — barriers really wait, divergence is reported, a
// kernel that strays past a buffer or writes a weight crashes the driver with a message.
//
// Invariant: each of these failures is reported as an error from Run, never as a result.
// Mutation that would silently break it: a driver that catches the crash and replies with
// the buffers anyway — the tests below expect an error and would fail.

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/turbospark/inspector/shaders"
	"github.com/turbospark/inspector/shaders/harness"
)

func floatBytes(xs []float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func selftest(kernel string, threads, n int) shaders.Dispatch {
	return shaders.Dispatch{
		Kernel:  kernel,
		Buffers: []shaders.Binding{{Operand: shaders.Operand{Handle: 0}, Align: 4}},
		Params:  binary.LittleEndian.AppendUint32(nil, uint32(n)),
		Groups:  [3]int{1, 1, 1},
		Threads: [3]int{threads, 1, 1},
	}
}

func TestBarrierWaitsForEveryThread(t *testing.T) {
	d := harness.Shared(t, false)
	const n = 200 // not a multiple of 32: the last simdgroup is partial
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	j := &harness.Job{Buffers: []harness.Buffer{{Data: floatBytes(xs)}},
		Dispatches: []shaders.Dispatch{selftest("selftest_reverse_through_threadgroup", n, n)}}
	if err := d.Run(j); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(j.Buffers[0].Data[4*i:])); got != float32(n-1-i) {
			t.Fatalf("x[%d] = %v, want %v: a thread read threadgroup memory before the barrier", i, got, n-1-i)
		}
	}
}

func TestBarrierDivergenceIsReported(t *testing.T) {
	d := harness.Shared(t, false)
	j := &harness.Job{Buffers: []harness.Buffer{{Data: make([]byte, 4*64)}},
		Dispatches: []shaders.Dispatch{selftest("selftest_early_exit_before_barrier", 64, 64)}}
	err := d.Run(j)
	if err == nil || !strings.Contains(err.Error(), "barrier divergence") {
		t.Fatalf("a thread exiting before a barrier: err = %v, want barrier divergence", err)
	}
}

func TestStrayAccessCrashesTheDriver(t *testing.T) {
	d := harness.Shared(t, false)
	small := harness.Buffer{Data: make([]byte, 4*100)}
	j := &harness.Job{Buffers: []harness.Buffer{small, {Data: make([]byte, 4*5000)}},
		Dispatches: []shaders.Dispatch{shaders.Add(shaders.Operand{Handle: 1}, shaders.Operand{Handle: 0}, 5000)}}
	if err := d.Run(j); err == nil || !strings.Contains(err.Error(), "outside its buffers") {
		t.Fatalf("reading 5000 floats of a 100-float buffer: err = %v, want a crash report", err)
	}
}

func TestWritingAWeightCrashesTheDriver(t *testing.T) {
	d := harness.Shared(t, false)
	j := &harness.Job{Buffers: []harness.Buffer{{Data: make([]byte, 4*64), ReadOnly: true}},
		Dispatches: []shaders.Dispatch{shaders.GELU(shaders.Operand{Handle: 0}, 64, 0)}}
	if err := d.Run(j); err == nil || !strings.Contains(err.Error(), "write to a weight") {
		t.Fatalf("a kernel writing a read-only buffer: err = %v, want a crash report", err)
	}
}

func TestParamsOfTheWrongSizeAreRefused(t *testing.T) {
	d := harness.Shared(t, false)
	disp := shaders.Add(shaders.Operand{Handle: 0}, shaders.Operand{Handle: 0}, 4)
	disp.Params = append(disp.Params, 0, 0, 0, 0)
	j := &harness.Job{Buffers: []harness.Buffer{{Data: make([]byte, 16)}}, Dispatches: []shaders.Dispatch{disp}}
	if err := d.Run(j); err == nil || !strings.Contains(err.Error(), "params of 8 bytes") {
		t.Fatalf("params one field too long: err = %v", err)
	}
}
