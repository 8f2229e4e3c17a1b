// Package cpu is the CPU backend of the vision engine: every primitive of backend.Backend in
// pure Go, float32 activations, weights widened from F32/BF16/F16 inside the op, spread over a
// small persistent worker pool.
//
// Invariant kept here: results do not depend on the number of threads. Every output element is
// computed by exactly one worker, by code whose summation order depends only on the shapes,
// never on how the work was cut (see kernel.go). Work splitting only decides who computes what.
// Mutation that would silently break it: letting a worker keep a partial sum over "its" slice of
// a reduction axis and merging partials at the end (the merge order would follow the partition).
package cpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// Buffer is the CPU backend's activation memory: a float32 slice. It implements backend.Buffer.
type Buffer struct {
	f []float32
}

// Len is the number of float32 elements (0 after Free).
func (b *Buffer) Len() int { return len(b.f) }

// Backend runs every op at once, on the calling goroutine plus up to threads-1 more.
// Its methods serialize on a mutex: ops from several goroutines run one at a time.
type Backend struct {
	mu        sync.Mutex
	threads   int
	scratch   [][]float32  // per worker; ops grow them on demand
	shared    []float32    // caller-side scratch: decoded bias / LayerNorm weights
	packs     [3]packEntry // weights widened for the FMA path in this pass (packcache.go)
	packCalls uint64
	packSeen  []packKey       // weights met once this pass and widened per task, not packed (packcache.go)
	amxSplit  []uint16        // x's bfloat16 pieces for the AMX path (matmul_amx.go)
	amxWeight []float32       // a weight too large for the pack cache, in VNNI tiles for one call
	packTime  time.Duration   // time spent packing weights since the last TakePackTime
	last      time.Time       // previous Commit (or New)
	ctx       context.Context // ops stop handing out tasks once it is done (Bind)
	pool      *par.Pool       // the ops' worker goroutines, kept between ops (Close ends them); nil below poolThreads
	loops     *loopProfile    // each parallel loop's wall and busy time, when profiled (loopprof.go); nil otherwise
}

var _ backend.Backend = (*Backend)(nil)

// New returns a backend that uses threads goroutines (runtime.NumCPU() when threads <= 0).
func New(threads int) *Backend {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	b := &Backend{
		threads: threads,
		ctx:     context.Background(),
		scratch: make([][]float32, threads),
		last:    time.Now(),
	}
	if threads >= poolThreads {
		b.pool = par.NewPool(threads)
		// A backend dropped without Close still ends its workers (they hold the pool, not b).
		runtime.AddCleanup(b, (*par.Pool).Close, b.pool)
	}
	return b
}

// poolThreads is the thread count from which the ops run on a pool of kept workers
// (par.Pool) rather than on goroutines started per op: the wake-up of a loop's workers grows
// with their number. On the 16-core device (8B tower, the pool against goroutines per op,
// interleaved, 14 pairs a cell over two runs): 16 threads 0.87-1.11 of the block at 1,024
// patches (medians 0.935, 0.919) and 0.88-1.12 at 5,120 (0.973, 0.965); 8 threads 1.00 and
// 0.98 (one run); 2 threads 1.04-1.13 at 1,024 (pairs 0.65-2.02) and 1.04-1.11 at 5,120 (11 of
// 14 pairs above 1), not understood, so 2 threads keep goroutines per op. This repository's
// 2-core VM agrees (par's BenchmarkLoop, 2 threads, 5 us tasks, 20 us between loops, six
// runs, three for each variant): 54-75 us a loop on goroutines per loop, 75-97 on the pool;
// spinning without runtime.Gosched 87-234, with a PAUSE in every poll 182-291 (a guess: the
// hypervisor takes the spinning vCPU away, as KVM's pause-loop exiting does).
const poolThreads = 8

// Threads is the number of goroutines that ops are spread over.
func (b *Backend) Threads() int { return b.threads }

// Close ends the worker goroutines and releases the pack cache's mappings (buffers are Go
// memory); it never fails. Ops after it still run, on goroutines started for each.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pool.Close()
	b.freePacks()
	b.amxSplit, b.amxWeight = nil, nil
	return nil
}

// Bind makes the ops that follow stop handing out tasks once ctx is done.
func (b *Backend) Bind(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ctx = ctx
}

// parallel runs an op's tasks on the backend's threads until they are done or the bound
// context is (the op's output is then incomplete: the caller discards the pass).
func (b *Backend) parallel(tasks int, fn func(worker, task int)) {
	if b.loops != nil { // inspector bench --loops (loopprof.go)
		b.profiled(b.loops, tasks, fn)
		return
	}
	b.pool.For(b.ctx, tasks, b.threads, fn)
}

// Caps: every op has finished when it returns (the engine times ops by the wall clock).
func (b *Backend) Caps() backend.Caps { return backend.Caps{Synchronous: true, Threads: b.threads} }

// Name identifies the backend in timings and reports.
func (b *Backend) Name() string { return fmt.Sprintf("cpu(%d threads, %s)", b.threads, kernel.Name()) }

// Alloc returns a zeroed buffer of n float32.
func (b *Backend) Alloc(n int) (backend.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cpu: Alloc(%d): negative size", n)
	}
	return &Buffer{f: make([]float32, n)}, nil
}

// Free drops the buffer's memory; any later use of it panics with a bounds message.
func (b *Backend) Free(buf backend.Buffer) {
	if cb, ok := buf.(*Buffer); ok {
		cb.f = nil
	}
}

// Upload copies src into dst[0:len(src)].
func (b *Backend) Upload(dst backend.View, src []float32) {
	copy(span(dst, len(src), "Upload dst"), src)
}

// Download copies src[0:len(dst)] into dst.
func (b *Backend) Download(dst []float32, src backend.View) {
	copy(dst, span(src, len(dst), "Download src"))
}

// Commit returns the wall time since the previous Commit (or since New). Ops have already
// run by the time they return, so there is nothing to flush and it never fails.
func (b *Backend) Commit() (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	d := now.Sub(b.last)
	b.last = now
	b.forgetPacks() // the pass is over: its weights may change now (packcache.go)
	return d, nil
}

// floats returns the memory of v from v.Off to the end of its buffer (aliased, not copied),
// so tests can look at activations without a Download. It panics if v is not a CPU buffer.
func floats(v backend.View) []float32 {
	buf := cpuBuffer(v, "floats")
	if v.Off < 0 || v.Off > len(buf.f) {
		panic(fmt.Sprintf("cpu: floats: offset %d outside buffer of %d", v.Off, len(buf.f)))
	}
	return buf.f[v.Off:]
}

func cpuBuffer(v backend.View, what string) *Buffer {
	buf, ok := v.Buf.(*Buffer)
	if !ok || buf == nil {
		panic(fmt.Sprintf("cpu: %s: view of %T, not a cpu buffer", what, v.Buf))
	}
	return buf
}

// span returns the n elements of v as a capped slice, or panics naming the operand.
func span(v backend.View, n int, what string) []float32 {
	buf := cpuBuffer(v, what)
	if n < 0 || v.Off < 0 || v.Off+n > len(buf.f) {
		panic(fmt.Sprintf("cpu: %s: [%d, %d) outside buffer of %d", what, v.Off, v.Off+n, len(buf.f)))
	}
	return buf.f[v.Off : v.Off+n : v.Off+n]
}

// noOverlap panics when an op's output shares memory with an input it reads (backend.Overlaps).
func noOverlap(op string, out backend.View, nOut int, in backend.View, nIn int) {
	if backend.Overlaps(out, nOut, in, nIn) {
		panic(fmt.Sprintf("cpu: %s: output [%d,%d) overlaps input [%d,%d)", op, out.Off, out.Off+nOut, in.Off, in.Off+nIn))
	}
}

// worker returns worker w's scratch with at least n elements.
func (b *Backend) worker(w, n int) []float32 {
	if cap(b.scratch[w]) < n {
		b.scratch[w] = make([]float32, n)
	}
	return b.scratch[w][:n]
}

// growScratch makes every worker's scratch hold n elements before a parallel op, so workers
// never allocate (and never race on the slice header).
func (b *Backend) growScratch(n int) {
	for w := range b.scratch {
		b.worker(w, n)
	}
}

// sharedScratch returns the caller-side scratch with n elements.
func (b *Backend) sharedScratch(n int) []float32 {
	if cap(b.shared) < n {
		b.shared = make([]float32, n)
	}
	return b.shared[:n]
}
