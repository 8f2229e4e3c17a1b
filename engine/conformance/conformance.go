// Package conformance holds a backend to the CPU engine, op by op: one table of cases on
// random inputs — shapes that are no multiple of any tile, views at element offsets, F32,
// BF16 and F16 weights at byte offsets, several attention segments (one of a single row),
// head dims 16, 64, 72 and 80, logits past 100 — each run on the backend under test and on a
// reference backend with the very same host inputs and weight bytes, and compared by
// relative error. The Metal tests run it (through the C++ kernel harness on Linux, on the
// GPU on a Mac) and `inspector selftest` runs it on the user's machine.
//
// Invariant: both sides are fed from the same host arrays and weight regions; nothing read
// back from the backend under test ever feeds the reference. Mutation that would silently
// break it: building the reference's inputs from the tested backend's download — a wrong
// kernel would agree with itself.
package conformance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/internal/numcheck"
)

// Tolerance is the relative error (max |got-want| / max |want|) every case must meet but
// Add, which is exact.
const Tolerance = 1e-5

// Result is one case: its name, the relative error, and a failure (a panic or an error
// of the backend), if any.
type Result struct {
	Name   string
	RelErr float64
	Tol    float64
	Err    error
}

// OK says whether the case passed.
func (r Result) OK() bool { return r.Err == nil && r.RelErr <= r.Tol }

// Run makes a backend with newBackend and one with newRef, runs every case on both, and
// closes both before it unmaps the weight memory (a GPU backend wraps it without copying).
func Run(newBackend, newRef func() (backend.Backend, error)) ([]Result, error) {
	be, err := newBackend()
	if err != nil {
		return nil, err
	}
	ref, err := newRef()
	if err != nil {
		be.Close()
		return nil, err
	}
	s := &suite{be: be, ref: ref, r: rand.New(rand.NewPCG(7, 7))}
	defer s.unmap()
	defer ref.Close()
	defer be.Close()
	for _, c := range cases {
		s.run(c.name, c.tol, c.fn)
	}
	return s.results, nil
}

type caseFn func(s *suite) (got, want []float32)

var cases = []struct {
	name string
	tol  float64
	fn   caseFn
}{
	{"layer_norm bf16 5x70", Tolerance, layerNorm(5, 70, dtype.BF16)},
	{"layer_norm f16 3x300", Tolerance, layerNorm(3, 300, dtype.F16)},
	{"matmul f32 37x45->50 +bias", Tolerance, matMul(37, 45, 50, dtype.F32, true)},
	{"matmul bf16 37x45->50 +bias", Tolerance, matMul(37, 45, 50, dtype.BF16, true)},
	{"matmul f16 37x45->50", Tolerance, matMul(37, 45, 50, dtype.F16, false)},
	{"matmul bf16 130x200->70 +bias", Tolerance, matMul(130, 200, 70, dtype.BF16, true)},
	{"matmul f32 1x1->1", Tolerance, matMul(1, 1, 1, dtype.F32, false)},
	{"rope hd=16", Tolerance, rope(16)},
	{"rope hd=72", Tolerance, rope(72)},
	{"attention hd=16", Tolerance, attention(16, 1)},
	{"attention hd=64", Tolerance, attention(64, 1)},
	{"attention hd=72", Tolerance, attention(72, 1)},
	{"attention hd=80", Tolerance, attention(80, 1)},
	{"attention hd=72, logits past 100", 2e-5, attention(72, 40)},
	{"gelu tanh", Tolerance, gelu(backend.GELUTanh)},
	{"gelu erf", Tolerance, gelu(backend.GELUErf)},
	{"add", 0, add(false)},
	{"add in place", 0, add(true)},
}

// Names lists the cases in the order Run runs them.
func Names() []string {
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	return names
}

type suite struct {
	be, ref backend.Backend
	r       *rand.Rand
	mems    [][]byte
	results []Result
}

// run runs one case; a panic in either backend is the case's failure, not the caller's.
func (s *suite) run(name string, tol float64, fn caseFn) {
	res := Result{Name: name, Tol: tol}
	func() {
		defer func() {
			if p := recover(); p != nil {
				res.Err = fmt.Errorf("panic: %v", p)
			}
		}()
		got, want := fn(s)
		if _, err := s.be.Commit(); err != nil {
			res.Err = err
			return
		}
		res.RelErr = numcheck.RelErr(got, want)
	}()
	s.results = append(s.results, res)
}

func (s *suite) unmap() {
	for _, m := range s.mems {
		unix.Munmap(m)
	}
}

// pair is one buffer on each backend holding the same values.
type pair struct{ be, ref backend.View }

func (s *suite) buf(xs []float32, n int) pair {
	b, err := s.be.Alloc(n)
	if err != nil {
		panic(err)
	}
	r, err := s.ref.Alloc(n)
	if err != nil {
		panic(err)
	}
	p := pair{backend.View{Buf: b}, backend.View{Buf: r}}
	s.be.Upload(p.be, xs)
	s.ref.Upload(p.ref, xs)
	return p
}

func (p pair) at(n int) pair { return pair{p.be.At(n), p.ref.At(n)} }

// read downloads n floats from both sides (the tested side first: it flushes its pass).
func (s *suite) read(p pair, n int) (got, want []float32) {
	got, want = make([]float32, n), make([]float32, n)
	s.be.Download(got, p.be)
	s.ref.Download(want, p.ref)
	return got, want
}

func (s *suite) randn(n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(s.r.NormFloat64() * scale)
	}
	return out
}

// weights lays vals out in one page-aligned region, each weight at the next 64-byte
// boundary plus skew bytes (skew 0 binds in place on a GPU; others make it copy).
func (s *suite) weights(dt dtype.DType, mapped bool, vals ...[]float32) []backend.Weight {
	var raw []byte
	var offs []int
	for _, v := range vals {
		off := (len(raw) + 63) / 64 * 64
		raw = append(raw, make([]byte, off-len(raw))...)
		offs = append(offs, off)
		raw = dtype.EncodeF32(raw, v, dt)
	}
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, (max(len(raw), 1)+page-1)/page*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("weight memory of %d bytes: %v", len(raw), err))
	}
	s.mems = append(s.mems, mem)
	copy(mem, raw)
	region := &backend.Region{ID: nextRegionID(), Bytes: mem[:len(raw)], Mapped: mapped}
	ws := make([]backend.Weight, len(vals))
	for i, v := range vals {
		ws[i] = backend.Weight{Name: fmt.Sprintf("w%d", i), DType: dt, Shape: []int{len(v)}, Region: region, Offset: offs[i]}
	}
	return ws
}

var regionIDs atomic.Int64 // offset far from the residency's IDs

func nextRegionID() int { return 1<<30 + int(regionIDs.Add(1)) }

func layerNorm(rows, cols int, dt dtype.DType) caseFn {
	return func(s *suite) ([]float32, []float32) {
		x := s.randn(rows*cols, 2)
		for i := range x {
			x[i] += 5 // a mean far from 0
		}
		ws := s.weights(dt, false, s.randn(cols, 1), s.randn(cols, 0.5))
		in, out := s.buf(x, rows*cols), s.buf(nil, rows*cols)
		s.be.LayerNorm(out.be, in.be, ws[0], ws[1], rows, cols, 1e-6)
		s.ref.LayerNorm(out.ref, in.ref, ws[0], ws[1], rows, cols, 1e-6)
		return s.read(out, rows*cols)
	}
}

// matMul reads x from element 3 of its buffer and writes y from element 5 of its own.
func matMul(rows, in, out int, dt dtype.DType, withBias bool) caseFn {
	return func(s *suite) ([]float32, []float32) {
		ws := s.weights(dt, true, s.randn(out*in, 0.2), s.randn(out, 0.5))
		bias := ws[1]
		if !withBias {
			bias = backend.Weight{}
		}
		x, y := s.buf(s.randn(rows*in+3, 1), rows*in+3), s.buf(nil, rows*out+5)
		s.be.MatMul(y.be.At(5), x.be.At(3), ws[0], bias, rows, in, out)
		s.ref.MatMul(y.ref.At(5), x.ref.At(3), ws[0], bias, rows, in, out)
		return s.read(y, rows*out+5)
	}
}

// qkv is a [seq, 3D] buffer over three segments, one of a single row.
func (s *suite) qkv(heads, hd int, scale float64) (pair, []backend.Segment, int) {
	segs := []backend.Segment{{Start: 0, End: 3}, {Start: 3, End: 40}, {Start: 40, End: 41}}
	seq := segs[len(segs)-1].End
	return s.buf(s.randn(seq*3*heads*hd, scale), seq*3*heads*hd), segs, seq
}

// rope rotates the q and k thirds of a qkv buffer; v must stay as it was.
func rope(hd int) caseFn {
	return func(s *suite) ([]float32, []float32) {
		const heads = 2
		D := heads * hd
		qkv, _, seq := s.qkv(heads, hd, 1)
		cos, sin := s.buf(s.randn(seq*hd, 1), seq*hd), s.buf(s.randn(seq*hd, 1), seq*hd)
		for _, off := range []int{0, D} {
			s.be.Rope2D(qkv.be.At(off), 3*D, cos.be, sin.be, seq, heads, hd)
			s.ref.Rope2D(qkv.ref.At(off), 3*D, cos.ref, sin.ref, seq, heads, hd)
		}
		return s.read(qkv, seq*3*D)
	}
}

// attention over three segments; q and k have variance scale, so the logits have standard
// deviation scale (40: the largest reach past 100).
func attention(hd int, scale float64) caseFn {
	return func(s *suite) ([]float32, []float32) {
		const heads = 2
		D := heads * hd
		qkv, segs, seq := s.qkv(heads, hd, math.Sqrt(scale))
		o := s.buf(nil, seq*D)
		sc := float32(1 / math.Sqrt(float64(hd)))
		s.be.Attention(o.be, qkv.be, qkv.be.At(D), qkv.be.At(2*D), 3*D, segs, heads, hd, sc)
		s.ref.Attention(o.ref, qkv.ref, qkv.ref.At(D), qkv.ref.At(2*D), 3*D, segs, heads, hd, sc)
		return s.read(o, seq*D)
	}
}

func gelu(form backend.GELUForm) caseFn {
	return func(s *suite) ([]float32, []float32) {
		const n = 600
		x := s.buf(s.randn(n, 3), n)
		s.be.GELU(x.be, n, form)
		s.ref.GELU(x.ref, n, form)
		return s.read(x, n)
	}
}

func add(inPlace bool) caseFn {
	return func(s *suite) ([]float32, []float32) {
		const n = 600
		dst, src := s.buf(s.randn(n, 1), n), s.buf(s.randn(n, 1), n)
		if inPlace {
			src = dst
		}
		s.be.Add(dst.be, src.be, n)
		s.ref.Add(dst.ref, src.ref, n)
		return s.read(dst, n)
	}
}
