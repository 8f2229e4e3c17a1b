package metal

// backend_shared_test.go: tests of Backend that run on every platform with a gpu: on Linux
// through the C++ kernel harness (harness_gpu_test.go), on a Mac on the GPU
// (metal_darwin_test.go). Each platform file provides newTestBackend.
//
// Invariant: every comparison is against the CPU backend (or a float64 reference) fed the
// very same inputs and weights, never against this backend's own earlier output. Mutation
// that would silently break it: building the CPU side from values downloaded from the Metal
// side — a wrong kernel would agree with itself.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/internal/testfixture"
	"github.com/turbospark/inspector/shaders"
)

func pageSize() int { return os.Getpagesize() }

// testMem holds, per test, the page memory to unmap after that test's backends closed: a
// no-copy buffer must be released before its memory goes (Apple's rule; the harness gpu
// checks it), so newTestBackend registers the unmapping before its own Close, and the
// cleanups, last in first out, close the backend first.
var testMem sync.Map // testing.TB -> *[][]byte

// holdTestMemory makes t's page memory outlive the backends made after this call.
func holdTestMemory(t testing.TB) {
	if _, loaded := testMem.LoadOrStore(t, new([][]byte)); loaded {
		return
	}
	t.Cleanup(func() {
		held, _ := testMem.LoadAndDelete(t)
		for _, mem := range *held.(*[][]byte) {
			unix.Munmap(mem)
		}
	})
}

// pageMem returns n bytes (rounded up to pages) of page-aligned memory outside the Go heap,
// unmapped after t's backends closed.
func pageMem(t testing.TB, n int) []byte {
	t.Helper()
	size := (max(n, 1) + pageSize() - 1) / pageSize() * pageSize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	holdTestMemory(t)
	held, _ := testMem.Load(t)
	*held.(*[][]byte) = append(*held.(*[][]byte), mem)
	return mem
}

var testRegionIDs = 1 << 20 // far from the residency's IDs

// regionOf lays weights out in one region: each at the next offset that is a multiple of
// align (plus skew bytes), in page-aligned memory unless heap is set.
func regionOf(t testing.TB, mapped, heap bool, align, skew int, dt dtype.DType, vals ...[]float32) []backend.Weight {
	t.Helper()
	var raw []byte
	var offs []int
	for _, v := range vals {
		off := (len(raw)+align-1)/align*align + skew
		raw = append(raw, make([]byte, off-len(raw))...)
		offs = append(offs, off)
		raw = dtype.EncodeF32(raw, v, dt)
	}
	mem := make([]byte, len(raw)+1)[1:] // the Go heap, 1 byte off any alignment
	if !heap {
		mem = pageMem(t, len(raw))
	}
	copy(mem, raw)
	testRegionIDs++
	region := &backend.Region{ID: testRegionIDs, Bytes: mem[:len(raw)], Mapped: mapped}
	ws := make([]backend.Weight, len(vals))
	for i, v := range vals {
		ws[i] = backend.Weight{Name: fmt.Sprintf("w%d", i), DType: dt, Shape: []int{len(v)}, Region: region, Offset: offs[i]}
	}
	return ws
}

func randn(r *rand.Rand, n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * scale)
	}
	return out
}

// twin runs the same ops on this backend and the CPU backend.
type twin struct {
	t   testing.TB
	gpu *Backend
	cpu *cpu.Backend
}

func newTwin(t testing.TB) twin {
	c := cpu.New(1)
	t.Cleanup(func() { c.Close() })
	return twin{t, newTestBackend(t), c}
}

// buf allocates n floats on both backends, holding xs (zeros after it).
func (w twin) buf(xs []float32, n int) (g, c backend.View) {
	w.t.Helper()
	gb, err := w.gpu.Alloc(n)
	if err != nil {
		w.t.Fatal(err)
	}
	cb, _ := w.cpu.Alloc(n)
	w.gpu.Upload(backend.View{Buf: gb}, xs)
	w.cpu.Upload(backend.View{Buf: cb}, xs)
	return backend.View{Buf: gb}, backend.View{Buf: cb}
}

// compare commits both, downloads n floats and checks the relative error.
func (w twin) compare(what string, g, c backend.View, n int, tol float64) {
	w.t.Helper()
	if _, err := w.gpu.Commit(); err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	got, want := make([]float32, n), make([]float32, n)
	w.gpu.Download(got, g)
	w.cpu.Download(want, c)
	e := numcheck.RelErr(got, want)
	w.t.Logf("%-28s rel %.2e", what, e)
	if !(e <= tol) {
		w.t.Errorf("%s: relative error %.3e against the CPU backend, tolerance %.0e", what, e, tol)
	}
}

const opTol = 1e-5

// Every op against the float64 references: the table every backend runs (engine/conformance).
func TestOpsConform(t *testing.T) {
	res, err := conformance.Run(func() (backend.Backend, error) { return newTestBackend(t), nil })
	if err != nil {
		t.Fatal(err)
	}
	worst := map[string]float64{}
	for _, r := range res {
		family := strings.SplitN(r.Name, "/", 2)[0]
		worst[family] = max(worst[family], r.RelErr)
		if !r.OK() {
			t.Errorf("%s: relative error %.3e against the reference (tolerance %.0e), %v", r.Name, r.RelErr, r.Tol, r.Err)
		}
	}
	t.Logf("%d cases; worst relative error per op: %v", len(res), worst)
}

// TestWeightPlacement: aligned weights in page-aligned regions are bound in place (one
// wrapper per region); a misaligned weight of a mapping is copied once; of a slot, copied
// for each pass; a region in the Go heap is never wrapped. All give the CPU's results.
func TestWeightPlacement(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	const rows, in, out = 9, 20, 12
	cases := []struct {
		name                 string
		mapped, heap         bool
		skew                 int
		wraps, copiesPerPass int // expected after each of two passes: wraps total, copies added
		copiesSecond         int
	}{
		{"slot aligned", false, false, 0, 1, 0, 0},
		{"mapped aligned", true, false, 0, 1, 0, 0},
		{"mapped misaligned", true, false, 2, 1, 2, 0}, // f32 at offsets 2 mod 4: copied once
		{"slot misaligned", false, false, 2, 1, 2, 2},  // copied again for every pass
		{"heap region", false, true, 0, 0, 2, 2},       // not page-aligned: copies
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newTwin(t)
			ws := regionOf(t, c.mapped, c.heap, 16, c.skew, dtype.F32, randn(r, out*in, 0.3), randn(r, out, 1))
			x := randn(r, rows*in, 1)
			gx, cx := w.buf(x, rows*in)
			gy, cy := w.buf(nil, rows*out)
			w.cpu.MatMul(cy, cx, ws[0], ws[1], rows, in, out)
			for pass := 0; pass < 2; pass++ {
				before := w.gpu.weights.copied
				w.gpu.MatMul(gy, gx, ws[0], ws[1], rows, in, out)
				w.compare(fmt.Sprintf("%s pass %d", c.name, pass), gy, cy, rows*out, opTol)
				want := c.copiesPerPass
				if pass == 1 {
					want = c.copiesSecond
				}
				if got := w.gpu.weights.copied - before; got != want {
					t.Errorf("pass %d: %d weight copies, want %d", pass, got, want)
				}
			}
			if w.gpu.weights.wraps != c.wraps {
				t.Errorf("%d regions wrapped, want %d", w.gpu.weights.wraps, c.wraps)
			}
		})
	}
}

// TestRefilledSlotIsRead: a slot refilled between passes (as the pread ring does after
// Done) must be read afresh, whether bound in place or copied per pass.
func TestRefilledSlotIsRead(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const rows, in, out = 4, 8, 6
	for _, skew := range []int{0, 2} {
		w := newTwin(t)
		first, second := randn(r, out*in, 1), randn(r, out*in, 1)
		ws := regionOf(t, false, false, 16, skew, dtype.F32, first)
		gx, cx := w.buf(randn(r, rows*in, 1), rows*in)
		gy, cy := w.buf(nil, rows*out)
		w.gpu.MatMul(gy, gx, ws[0], backend.Weight{}, rows, in, out)
		w.cpu.MatMul(cy, cx, ws[0], backend.Weight{}, rows, in, out)
		w.compare(fmt.Sprintf("slot skew %d, first fill", skew), gy, cy, rows*out, opTol)
		copy(ws[0].Region.Bytes[ws[0].Offset:], dtype.EncodeF32(nil, second, dtype.F32)) // refill in place
		// as the ring refills a slot only after the pass that read it committed:
		w.cpu.Commit()
		w.gpu.MatMul(gy, gx, ws[0], backend.Weight{}, rows, in, out)
		w.cpu.MatMul(cy, cx, ws[0], backend.Weight{}, rows, in, out)
		w.compare(fmt.Sprintf("slot skew %d, refilled", skew), gy, cy, rows*out, opTol)
	}
}

// TestHostAccessKeepsCallOrder: Download sees pending work; Upload waits for the ops
// encoded before it; Free of a buffer a pending op uses waits for the pass.
func TestHostAccessKeepsCallOrder(t *testing.T) {
	be := newTestBackend(t)
	const n = 300
	a, _ := be.Alloc(n)
	b, _ := be.Alloc(n)
	av, bv := backend.View{Buf: a}, backend.View{Buf: b}
	fill := func(v float32) []float32 {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	expect := func(step string, want float32) {
		t.Helper()
		got := make([]float32, n)
		be.Download(got, av) // no Commit: Download itself must wait for the pending pass
		if got[0] != want || got[n-1] != want {
			t.Fatalf("%s: a = %v .. %v, want %v", step, got[0], got[n-1], want)
		}
	}
	be.Upload(av, fill(1))
	be.Upload(bv, fill(1))
	be.Add(av, bv, n)
	expect("Download after a pending Add", 2)
	be.Add(av, bv, n)      // a = 3 once run, with b = 1
	be.Upload(bv, fill(2)) // must not overtake the Add above
	be.Add(av, bv, n)      // a = 5
	be.Free(b)             // the pending Add still reads b
	if _, err := be.Commit(); err != nil {
		t.Fatal(err)
	}
	expect("Upload between two Adds, then Free of a pending operand", 5)
}

// ---- the tower ----

func runTower(t testing.TB, dir string, be backend.Backend, mode engine.ResidencyMode, in *engine.Input) *engine.Run {
	t.Helper()
	e := testfixture.Engine(t, dir, be, engine.Settings{Residency: mode, TileRows: 50, Keep: engine.Keep{Outputs: true}})
	return testfixture.RunAll(t, e, in)
}

// checkTower runs the tiny tower on be in one residency mode and compares every block
// output, both deepstack outputs and the merger with the CPU engine and with transformers.
// It returns the worst relative error against the CPU engine.
func checkTower(t *testing.T, be *Backend, mode engine.ResidencyMode) float64 {
	fx := testfixture.Open(t, filepath.Join("..", "engine", "testdata", "qwen3vl_vision_tiny_f32.safetensors"))
	dir, f, in := fx.Dir, fx.File, fx.Input(t)
	c := cpu.New(0)
	t.Cleanup(func() { c.Close() })
	want := runTower(t, dir, c, mode, in)
	got := runTower(t, dir, be, mode, in)
	type pair struct {
		name      string
		got, want []float32
		ref       string
	}
	var pairs []pair
	wantOut, gotOut := want.Probes.Outputs(), got.Probes.Outputs()
	for i := range wantOut {
		pairs = append(pairs, pair{fmt.Sprintf("block %d", i), gotOut[i], wantOut[i], fmt.Sprintf("blk%d", i)})
	}
	for k := range want.Deepstack {
		pairs = append(pairs, pair{fmt.Sprintf("deepstack %d", k), got.Deepstack[k], want.Deepstack[k], fmt.Sprintf("deepstack%d", k)})
	}
	pairs = append(pairs, pair{"merger", got.Merger, want.Merger, "pooler_output"})
	if len(gotOut) != 4 || len(got.Deepstack) != 2 {
		t.Fatalf("%d block outputs and %d deepstack outputs, want 4 and 2", len(gotOut), len(got.Deepstack))
	}
	worst := 0.0
	for _, p := range pairs {
		ref, err := f.ReadF32(p.ref)
		if err != nil {
			t.Fatal(err)
		}
		eCPU, eHF := numcheck.RelErr(p.got, p.want), numcheck.RelErr(p.got, ref)
		t.Logf("%s %-12s rel %.2e vs CPU engine, %.2e vs transformers", mode, p.name, eCPU, eHF)
		if !(eCPU <= 1e-5) || !(eHF <= 1e-5) {
			t.Errorf("%s %s: relative error %.3e vs CPU engine, %.3e vs transformers; tolerance 1e-5", mode, p.name, eCPU, eHF)
		}
		worst = math.Max(worst, eCPU)
	}
	for i, tm := range got.Timings {
		if tm.Attention <= 0 || tm.MLP <= 0 {
			t.Errorf("block %d: pass times %v / %v, want both > 0", i, tm.Attention, tm.MLP)
		}
	}
	return worst
}

// TestProfiledPassesAreOneDispatchEach: a profiling backend (what `inspector gpumodel` times
// each kernel with on a Mac) runs every dispatch in a command buffer of its own and keeps its
// GPU time, with the same results as the CPU backend.
func TestProfiledPassesAreOneDispatchEach(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	w := newTwin(t)
	log := w.gpu.profile(shaders.GPUs[0])
	const rows, in, out = 70, 45, 130
	ws := regionOf(t, true, false, 4, 0, dtype.F32, randn(r, out*in, 0.1), randn(r, out, 0.1))
	xv := randn(r, rows*in, 1)
	gx, cx := w.buf(xv, rows*in)
	gy, cy := w.buf(nil, rows*out)
	for _, side := range []struct {
		be   backend.Backend
		x, y backend.View
	}{{w.gpu, gx, gy}, {w.cpu, cx, cy}} {
		side.be.MatMulEpilogue(side.y, side.x, ws[0], ws[1], rows, in, out, backend.Epilogue{GELU: true})
		side.be.GELU(side.y, rows*out, backend.GELUTanh)
		side.be.Add(side.y, side.y, rows*out)
	}
	w.compare("profiled matmul, gelu, add", gy, cy, rows*out, opTol)
	if len(log.Records) != 3 || log.Passes != 3 {
		t.Fatalf("%d dispatches in %d command buffers, want 3 in 3", len(log.Records), log.Passes)
	}
	for i, rec := range log.Records {
		if rec.Pass != i || !(rec.Measured > 0) || !(rec.Estimate.Time > 0) {
			t.Errorf("dispatch %d (%s): pass %d, measured %v, modelled %v", i, rec.Kernel, rec.Pass, rec.Measured, rec.Estimate.Time)
		}
	}
}
