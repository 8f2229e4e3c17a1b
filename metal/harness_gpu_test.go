//go:build linux

package metal

// harness_gpu_test.go: a gpu for Backend that runs each pass through the C++ kernel harness,
// so the whole backend — views, weight binding, passes, the engine's tower — runs on Linux
// with the real kernels. Buffers are host memory; a wrapped region is the region's own
// memory (no copy), sent to the driver read-only at every commit, as a GPU would read it.
//
// Its pipelines come from buildUnits (units.go), as the Mac's do, with a compile and a
// pipeline that fail on demand (standIn): a stand-in whose matmul unit "did not compile" runs
// the tower on the scalar matmul, as a Mac whose compiler rejects the simdgroup code would.
//
// It also keeps Metal's rules for no-copy buffers that Linux would not enforce: a wrapped
// region starts on a page boundary of the backend's page size (16 KiB on Apple silicon),
// every page the buffer covers is mapped, and the memory stays mapped until the buffer is
// released (checked with msync at release); and every buffer is released by the end.
//
// Invariant: a buffer released while a pending pass still uses it, or after its memory was
// unmapped, or never, is recorded as a fault, not ignored. Mutation that would silently
// break it: checking releases against the committed passes instead of the pending one —
// Free before Commit would look harmless.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/shaders"
	"github.com/turbospark/inspector/shaders/harness"
)

type hostBuf struct {
	mem      []byte
	wrapped  bool   // a region's memory: read-only for kernels
	pages    []byte // wrapped: the whole pages the buffer covers
	released bool
}

type harnessGPU struct {
	drv     *harness.Driver
	mutant  string             // a MUTANT(name) of the kernels every pass runs (drv built with mutants)
	built   builtUnits[string] // its pipelines (each named by its kernel), as buildUnits made them
	ran     map[string]int     // dispatches run, per kernel
	pending []shaders.Dispatch
	passes  int
	live    map[*hostBuf]bool
	faults  []string
}

func (g *harnessGPU) made(b *hostBuf) *hostBuf {
	if g.live == nil {
		g.live = map[*hostBuf]bool{}
	}
	g.live[b] = true
	return b
}

// mapped says whether every page of mem is mapped (msync fails with ENOMEM otherwise).
func mapped(mem []byte) bool {
	return unix.Msync(mem, unix.MS_ASYNC) == nil
}

func (g *harnessGPU) name() string { return "C++ kernel harness" }

func (g *harnessGPU) newBuffer(n int) (devBuffer, []byte, error) {
	b := g.made(&hostBuf{mem: make([]byte, n)})
	return b, b.mem, nil
}

func (g *harnessGPU) wrap(mem []byte, page int) (devBuffer, error) {
	base := uintptr(unsafe.Pointer(&mem[0]))
	if base%uintptr(page) != 0 {
		g.faults = append(g.faults, fmt.Sprintf("no-copy buffer at %#x, not on a %d-byte page boundary", base, page))
	}
	pages := unsafe.Slice(&mem[0], (len(mem)+page-1)/page*page)
	if !mapped(pages) {
		g.faults = append(g.faults, fmt.Sprintf("no-copy buffer of %d bytes (%d rounded to %d-byte pages) covers unmapped memory", len(mem), len(pages), page))
	}
	return g.made(&hostBuf{mem: mem, wrapped: true, pages: pages}), nil
}

func (g *harnessGPU) release(d devBuffer) {
	b := d.(*hostBuf)
	if b.released {
		g.faults = append(g.faults, "buffer released twice")
	}
	if b.wrapped && !mapped(b.pages) {
		g.faults = append(g.faults, "no-copy buffer released after its memory was unmapped (Metal requires the memory to outlive the buffer)")
	}
	delete(g.live, b)
	for _, disp := range g.pending {
		for _, bind := range disp.Buffers {
			if bind.Handle == d {
				g.faults = append(g.faults, fmt.Sprintf("buffer released while pending %s uses it", disp.Kernel))
			}
		}
	}
	b.released = true
}

func (g *harnessGPU) supports(kernel string) bool { _, ok := g.built.pipelines[kernel]; return ok }

func (g *harnessGPU) encode(d shaders.Dispatch) {
	if !g.supports(d.Kernel) {
		g.faults = append(g.faults, "encoded "+d.Kernel+", which this GPU has no pipeline for")
	}
	if g.ran == nil {
		g.ran = map[string]int{}
	}
	g.ran[d.Kernel]++
	g.pending = append(g.pending, d)
}

// commit sends the buffers the pending dispatches use, runs them, and copies the writable
// ones back.
func (g *harnessGPU) commit() (time.Duration, error) {
	start := time.Now()
	job := &harness.Job{Mutant: g.mutant}
	index := map[*hostBuf]int{}
	for _, d := range g.pending {
		rebound := d
		rebound.Buffers = make([]shaders.Binding, len(d.Buffers))
		for i, bind := range d.Buffers {
			b := bind.Handle.(*hostBuf)
			if b.released {
				return 0, fmt.Errorf("%s binds a released buffer", d.Kernel)
			}
			idx, ok := index[b]
			if !ok {
				idx = len(job.Buffers)
				index[b] = idx
				job.Buffers = append(job.Buffers, harness.Buffer{Data: b.mem, ReadOnly: b.wrapped})
			}
			rebound.Buffers[i] = shaders.Binding{Operand: shaders.Operand{Handle: idx, Offset: bind.Offset}, Align: bind.Align}
		}
		job.Dispatches = append(job.Dispatches, rebound)
	}
	g.pending = nil
	g.passes++
	err := g.drv.Run(job) // writable buffers are written back in place
	return time.Since(start), err
}

func (g *harnessGPU) close() {
	if len(g.live) > 0 {
		g.faults = append(g.faults, fmt.Sprintf("%d buffers never released", len(g.live)))
	}
}

// standIn is how the stand-in's build goes wrong: units whose compile fails, kernels that get
// no pipeline.
type standIn struct {
	failUnits, noPipeline []string
}

// build runs buildUnits as gpu_darwin.go does, with a compile and pipelines that fail where c
// says.
func (c standIn) build() (builtUnits[string], error) {
	return buildUnits(unitBuilder[string, string]{
		os: "the stand-in",
		compile: func(u shaders.Unit) (string, error) {
			if slices.Contains(c.failUnits, u.Name) {
				return "", fmt.Errorf("program_source:7:5: error: stand-in refuses %s", u.Name)
			}
			return u.Source(), nil
		},
		pipeline: func(lib, kernel string) (string, error) {
			if slices.Contains(c.noPipeline, kernel) || !strings.Contains(lib, "kernel void "+kernel+"(") {
				return "", fmt.Errorf("metal: pipeline %s: stand-in refuses it", kernel)
			}
			return kernel, nil
		},
		free:    func(string) {},
		release: func(string) {},
	})
}

// newTestBackend returns a Backend over the harness; faults fail the test at cleanup.
func newTestBackend(t testing.TB) *Backend { return newStandInBackend(t, standIn{}) }

// newStandInBackend is newTestBackend on a stand-in whose build went wrong as c says.
func newStandInBackend(t testing.TB, c standIn) *Backend { return newMutantBackend(t, c, "") }

// newMutantBackend is newStandInBackend whose kernels run as the MUTANT(mutant) variant.
func newMutantBackend(t testing.TB, c standIn, mutant string) *Backend {
	holdTestMemory(t) // unmapped after the Close below
	built, err := c.build()
	if err != nil {
		t.Fatalf("the stand-in's build: %v", err)
	}
	g := &harnessGPU{drv: harness.Shared(t, mutant != ""), built: built, mutant: mutant}
	b := newBackend(g, pageSize())
	t.Cleanup(func() {
		b.Close()
		if len(g.faults) > 0 {
			t.Errorf("gpu faults: %v", g.faults)
		}
	})
	return b
}

// A GPU that could not make a pipeline for a flash attention kernel (shaders.Optional) still
// runs the tower: its attention takes the scalar kernel, with the same results; a GPU that has
// it runs the flash kernel.
func TestMissingFlashKernelFallsBack(t *testing.T) {
	for _, missing := range []bool{false, true} {
		var c standIn
		if missing {
			c.noPipeline = []string{"attention_hd16"}
		}
		b := newStandInBackend(t, c)
		g := b.dev.(*harnessGPU)
		checkTower(t, b, engine.Mapped)
		flash, scalar := g.ran["attention_hd16"], g.ran["attention"]
		t.Logf("missing %v: %d flash and %d scalar attention dispatches", missing, flash, scalar)
		if missing != (flash == 0) || missing != (scalar > 0) {
			t.Errorf("flash kernel missing %v: %d flash and %d scalar attention dispatches", missing, flash, scalar)
		}
	}
}

// A GPU whose compiler rejected the simdgroup-matrix matmul (and the flash attention) still runs
// the tower, on the scalar kernels, within the CPU engine's tolerance; nothing but the scalar
// kernels is dispatched, and the build says what failed and what runs instead.
func TestTowerWithoutSimdgroupFamilies(t *testing.T) {
	for _, fail := range [][]string{{"matmul"}, {"matmul", "flash"}} {
		t.Run(strings.Join(fail, "+"), func(t *testing.T) {
			b := newStandInBackend(t, standIn{failUnits: fail})
			g := b.dev.(*harnessGPU)
			if len(g.built.familyErrors) != len(fail) {
				t.Errorf("family errors %q, want one per failed unit %v", g.built.familyErrors, fail)
			}
			worst := checkTower(t, b, engine.Mapped)
			t.Logf("worst relative error against the CPU engine %.3g; dispatches %v", worst, g.ran)
			for k, n := range g.ran {
				if u := shaders.UnitOf(k); slices.Contains(fail, u) {
					t.Errorf("%d dispatches of %s, whose unit %s did not compile", n, k, u)
				}
			}
			if g.ran["matmul_scalar_f32"] == 0 {
				t.Errorf("no scalar matmul ran: %v", g.ran)
			}
		})
	}
}
