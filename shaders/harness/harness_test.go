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
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/dtype"
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

// matrixElem is one element type of a simdgroup matrix: its bytes and the rounding of a
// float64 into it (and back), as the harness stores it.
type matrixElem struct {
	name  string
	size  int
	put   func(b []byte, v float64)
	get   func(b []byte) float64
	ulp   float64 // relative spacing near 1: the tolerance of one rounding
	round func(v float64) float64
}

var matrixElems = []matrixElem{
	{"float", 4,
		func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v))) },
		func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) },
		1.0 / (1 << 23), func(v float64) float64 { return float64(float32(v)) }},
	{"half", 2,
		func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, dtype.F32ToF16(float32(v))) },
		func(b []byte) float64 { return float64(dtype.F16ToF32(binary.LittleEndian.Uint16(b))) },
		1.0 / (1 << 10), func(v float64) float64 { return float64(dtype.F16ToF32(dtype.F32ToF16(float32(v)))) }},
	{"bfloat", 2,
		func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(v))>>16)) },
		func(b []byte) float64 {
			return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
		},
		1.0 / (1 << 7), func(v float64) float64 { return float64(math.Float32frombits(math.Float32bits(float32(v)) &^ 0xffff)) }},
}

func matrixDispatch(kernel string, threads, nbuf int) shaders.Dispatch {
	d := shaders.Dispatch{Kernel: kernel, Params: binary.LittleEndian.AppendUint32(nil, 1),
		Groups: [3]int{1, 1, 1}, Threads: [3]int{threads, 1, 1}}
	for i := 0; i < nbuf; i++ {
		d.Buffers = append(d.Buffers, shaders.Binding{Operand: shaders.Operand{Handle: i}, Align: 2})
	}
	return d
}

// TestSimdgroupMatrixOps: load (plain and transposed, from device and threadgroup memory),
// multiply_accumulate and store (plain and transposed) of 8x8 float, half and bfloat
// matrices against a float64 product, with two simdgroups running the same collective.
func TestSimdgroupMatrixOps(t *testing.T) {
	d := harness.Shared(t, false)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, el := range matrixElems {
		t.Run(el.name, func(t *testing.T) {
			var a, b, c [64]float64
			bufs := make([]harness.Buffer, 4)
			bufs[0].Data = make([]byte, 128*el.size)
			for i, m := range []*[64]float64{&a, &b, &c} {
				data := make([]byte, 64*el.size)
				for k := range m {
					m[k] = el.round(rng.Float64()*2 - 1)
					el.put(data[k*el.size:], m[k])
				}
				bufs[i+1] = harness.Buffer{Data: data, ReadOnly: true}
			}
			j := &harness.Job{Buffers: bufs, Dispatches: []shaders.Dispatch{matrixDispatch("selftest_matrix_"+el.name, 64, 4)}}
			if err := d.Run(j); err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for r := 0; r < 8; r++ {
				for col := 0; col < 8; col++ {
					want := c[r*8+col]
					for k := 0; k < 8; k++ {
						want += a[r*8+k] * b[col*8+k] // b was loaded transposed
					}
					got := el.get(bufs[0].Data[(r*8+col)*el.size:])
					gotT := el.get(bufs[0].Data[(64+col*8+r)*el.size:])
					if gotT != got {
						t.Fatalf("transposed store: [%d][%d] = %v, the plain store has %v", col, r, gotT, got)
					}
					worst = max(worst, math.Abs(got-want)/max(math.Abs(want), 1))
				}
			}
			// Eight float roundings in the sum, then one rounding to the element type.
			tol := el.ulp + 8.0/(1<<24)
			t.Logf("%s: max error %.3g (tolerance %.3g)", el.name, worst, tol)
			if !(worst <= tol) {
				t.Errorf("%s: a*b^T+c off by %.3g relative, more than its roundings allow (%.3g)", el.name, worst, tol)
			}
		})
	}
}

func TestSimdgroupMatrixCollectiveRules(t *testing.T) {
	d := harness.Shared(t, false)
	run := func(disp shaders.Dispatch, data []byte) ([]byte, error) {
		j := &harness.Job{Buffers: []harness.Buffer{{Data: data}}, Dispatches: []shaders.Dispatch{disp}}
		err := d.Run(j)
		return j.Buffers[0].Data, err
	}
	t.Run("lane-dependent source", func(t *testing.T) {
		_, err := run(matrixDispatch("selftest_matrix_lane_dependent_source", 32, 1), make([]byte, 4*128))
		if err == nil || !strings.Contains(err.Error(), "disagree") {
			t.Fatalf("lanes loading from different rows: err = %v, want the lanes' disagreement", err)
		}
	})
	t.Run("partial simdgroup", func(t *testing.T) {
		bufs := []harness.Buffer{{Data: make([]byte, 128*4)}, {Data: make([]byte, 64*4)}, {Data: make([]byte, 64*4)}, {Data: make([]byte, 64*4)}}
		j := &harness.Job{Buffers: bufs, Dispatches: []shaders.Dispatch{matrixDispatch("selftest_matrix_float", 48, 4)}}
		if err := d.Run(j); err == nil || !strings.Contains(err.Error(), "needs all 32 lanes") {
			t.Fatalf("a matrix op in a 16-lane simdgroup: err = %v", err)
		}
	})
	// The lanes of two simdgroups stage a tile; without the threadgroup barrier the first
	// simdgroup loads it before the second has written its half.
	for _, withBarrier := range []bool{true, false} {
		xs := make([]float32, 128)
		for i := range 64 {
			xs[i] = float32(i + 1)
		}
		disp := matrixDispatch("selftest_matrix_load_without_barrier", 64, 1)
		if !withBarrier {
			disp.Params = binary.LittleEndian.AppendUint32(nil, 0)
		}
		out, err := run(disp, floatBytes(xs))
		if err != nil {
			t.Fatal(err)
		}
		same := true
		for i := range 64 {
			same = same && math.Float32frombits(binary.LittleEndian.Uint32(out[4*(64+i):])) == xs[i]
		}
		if same != withBarrier {
			t.Errorf("barrier %v: loaded tile complete = %v; the harness must show a load before the barrier", withBarrier, same)
		}
	}
}
