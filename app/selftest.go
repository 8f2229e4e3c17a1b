package main

// selftest.go: `inspector selftest`, the first thing to run on a new machine (above all the
// first Mac): what the platform and the GPU are, every kernel against the CPU engine on
// random inputs, two towers end to end in both residency modes, and what each kernel takes
// at a real model's shapes. It never crashes: a check that panics is a failed check, and
// what cannot run here (Metal off macOS, on an Intel Mac, on a GPU below Apple7, before
// macOS 14) is a skip with its reason.
//
// Invariant: every number printed is compared with a reference computed from the same
// inputs on the CPU engine (single-threaded), never with the backend's own output. Mutation
// that would silently break it: comparing the Metal tower with a second Metal run — a
// wrong kernel would agree with itself.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/turbospark/inspector/assets"
	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/metal"
)

// selftest counts checks as they are printed.
type selftest struct {
	w              io.Writer
	passed, failed int
	skipped        int
	noTimes        bool
}

func (st *selftest) check(name string, ok bool, detail string) {
	mark := "ok"
	if ok {
		st.passed++
	} else {
		st.failed++
		mark = "FAIL"
	}
	fmt.Fprintf(st.w, "  %-52s %-4s %s\n", name, mark, detail)
}

func cmdSelftest(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	which := fs.String("backend", "all", "what to test: all (the CPU, and Metal where it runs), cpu or metal")
	noTimes := fs.Bool("no-times", false, "skip the kernel timings at the 8B model's shapes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *which != "all" && *which != "cpu" && *which != "metal" {
		return fmt.Errorf("--backend %q: want all, cpu or metal", *which)
	}
	st := &selftest{w: stdout, noTimes: *noTimes}
	fmt.Fprintf(stdout, "inspector selftest: %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	towers, cleanup, err := selftestTowers()
	if err != nil {
		return err
	}
	defer cleanup()
	if *which != "metal" {
		st.cpu(towers)
	}
	if *which != "cpu" {
		st.metal(towers)
	}
	fmt.Fprintf(stdout, "\n%d checks passed, %d failed, %d skipped\n", st.passed, st.failed, st.skipped)
	if st.failed > 0 {
		return fmt.Errorf("%d checks failed", st.failed)
	}
	return nil
}

func newCPUBackend(threads int) func() (backend.Backend, error) {
	return func() (backend.Backend, error) { return cpu.New(threads), nil }
}

// cpu: the CPU engine on all cores against itself on one (bit-identical by design).
func (st *selftest) cpu(towers []selftestTower) {
	be := cpu.New(0)
	fmt.Fprintf(st.w, "\ncpu: %s\n", be.Name())
	be.Close()
	st.ops(newCPUBackend(0))
	st.towers(towers, newCPUBackend(0), 0)
	st.times(newCPUBackend(0))
}

func (st *selftest) metal(towers []selftestTower) {
	fmt.Fprintln(st.w, "\nmetal:")
	info, err := metal.Device()
	if errors.Is(err, metal.ErrUnsupported) {
		st.skipped++
		fmt.Fprintf(st.w, "  skipped: %v\n", err)
		return
	}
	if err != nil {
		st.check("device, library and pipelines", false, err.Error())
		return
	}
	fmt.Fprintf(st.w, "  %s, GPU family %s, %s; unified memory %v, max buffer %s, working set %s\n",
		info.Name, info.Family, info.OS, info.UnifiedMemory, engine.FormatBytes(info.MaxBuffer), engine.FormatBytes(info.WorkingSet))
	st.check("library compiled, pipelines made", true, fmt.Sprintf("%d pipelines in %.0f ms", info.Pipelines, engine.Millis(info.CompileTime)))
	for _, f := range info.Fallbacks { // an optional kernel without a pipeline: its ops run another one
		fmt.Fprintf(st.w, "  note: %s; that head dim runs the scalar attention kernel\n", f)
	}
	if err := metal.Check(); err != nil {
		st.check("a first pass on the GPU", false, err.Error())
		return
	}
	st.check("a first pass on the GPU", true, "exact")
	newMetal := func() (backend.Backend, error) { return metal.New() }
	st.ops(newMetal)
	st.towers(towers, newMetal, 1e-5)
	st.times(newMetal)
}

// ops runs the conformance table (every op against float64 references): one line per op
// with its worst case, and a line for every case that fails.
func (st *selftest) ops(newBackend func() (backend.Backend, error)) {
	fmt.Fprintln(st.w, "  each op against float64 references (random inputs, odd shapes; worst relative error):")
	res, err := conformance.Run(newBackend)
	if err != nil {
		st.check("making the backend", false, err.Error())
		return
	}
	type family struct {
		cases, failed int
		worst         conformance.Result
	}
	var order []string
	families := map[string]*family{}
	for _, r := range res {
		name := strings.SplitN(r.Name, "/", 2)[0]
		f := families[name]
		if f == nil {
			f = &family{}
			families[name] = f
			order = append(order, name)
		}
		f.cases++
		if r.RelErr >= f.worst.RelErr || f.cases == 1 {
			f.worst = r
		}
		if !r.OK() {
			f.failed++
			detail := fmt.Sprintf("%.2e (tolerance %.0e)", r.RelErr, r.Tol)
			if r.Err != nil {
				detail = r.Err.Error()
			}
			st.check("  "+r.Name, false, detail)
		}
	}
	for _, name := range order {
		f := families[name]
		if f.failed == 0 {
			st.check(fmt.Sprintf("  %s (%d cases)", name, f.cases), true, fmt.Sprintf("%.2e (tolerance %.0e; %s)", f.worst.RelErr, f.worst.Tol, f.worst.Name))
		}
	}
}

// selftestTower is a checkpoint and a page to run through it.
type selftestTower struct {
	name string
	dir  string
	in   func(ck *engine.Checkpoint) (*engine.Input, error)
}

// selftestTowers are the demo on its photo (F32, the preprocessing included) and a tiny
// Qwen3.5 tower (BF16, head dim 72) on random pixels of an image and a 2-frame video.
func selftestTowers() ([]selftestTower, func(), error) {
	demoDir, photo, err := assets.Demo()
	if err != nil {
		return nil, nil, fmt.Errorf("unpacking the demo: %v", err)
	}
	tmp, err := os.MkdirTemp("", "inspector-selftest-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	if err := synth.Generate(tmp, "tiny-qwen3.5", synth.Options{DType: dtype.BF16, Seed: 11}); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("writing the tiny tower: %v", err)
	}
	towers := []selftestTower{
		{"demo (f32) on the sample photo", demoDir, func(ck *engine.Checkpoint) (*engine.Input, error) {
			return ck.LoadImage(photo, imageproc.DefaultLimits())
		}},
		{"tiny qwen3.5 (bf16, hd 72), image + video", tmp, func(ck *engine.Checkpoint) (*engine.Input, error) {
			grids := []geom.Grid{{T: 1, H: 8, W: 12}, {T: 2, H: 4, W: 4}}
			n := 0
			for _, g := range grids {
				n += g.Patches()
			}
			r := rand.New(rand.NewPCG(3, 5))
			px := make([]float32, n*ck.Config.PatchDim())
			for i := range px {
				px[i] = float32(2*r.Float64() - 1)
			}
			return &engine.Input{Pixels: px, Grids: grids}, nil
		}},
	}
	return towers, cleanup, nil
}

// runTower runs a whole tower and keeps every output.
func runTower(t selftestTower, be backend.Backend, mode engine.ResidencyMode) (*engine.Session, error) {
	ck, err := engine.OpenCheckpoint(t.dir)
	if err != nil {
		be.Close()
		return nil, err
	}
	in, err := t.in(ck)
	if err != nil {
		be.Close()
		return nil, err
	}
	sess, err := engine.NewSession(ck, in, t.dir, "", engine.Settings{Residency: mode, Keep: engine.Keep{Outputs: true}}, be)
	if err != nil {
		return nil, err
	}
	if err := sess.RunAll(context.Background()); err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// towers runs each tower on the backend in both residency modes against the CPU engine
// (one thread, mapped); tol 0 asks for bit-identical outputs.
func (st *selftest) towers(towers []selftestTower, newBackend func() (backend.Backend, error), tol float64) {
	fmt.Fprintln(st.w, "  whole towers against the CPU engine (every block output, deepstack and merger):")
	for _, t := range towers {
		ref, err := runTower(t, cpu.New(1), engine.Mapped)
		if err != nil {
			st.check(t.name, false, "on the CPU: "+err.Error())
			continue
		}
		for _, mode := range []engine.ResidencyMode{engine.Mapped, engine.Pread} {
			name := fmt.Sprintf("  %s, %s", t.name, mode)
			worst, start := 0.0, time.Now()
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				be, err := newBackend()
				if err != nil {
					return err
				}
				sess, err := runTower(t, be, mode)
				if err != nil {
					return err
				}
				defer sess.Close()
				worst = towerError(sess.Run, ref.Run)
				return nil
			}()
			if err != nil {
				st.check(name, false, err.Error())
				continue
			}
			wall := time.Since(start)
			if tol == 0 {
				st.check(name, worst == 0, fmt.Sprintf("%.2e (bit-identical expected), %.0f ms", worst, engine.Millis(wall)))
			} else {
				st.check(name, worst <= tol, fmt.Sprintf("%.2e (tolerance %.0e), %.0f ms", worst, tol, engine.Millis(wall)))
			}
		}
		ref.Close()
	}
}

// towerError is the worst relative error of any output of got against ref.
func towerError(got, ref *engine.Run) float64 {
	worst := numcheck.RelErr(got.Merger, ref.Merger)
	gotOut := got.Probes.Outputs()
	for i, want := range ref.Probes.Outputs() {
		worst = max(worst, numcheck.RelErr(gotOut[i], want))
	}
	for k := range ref.Deepstack {
		worst = max(worst, numcheck.RelErr(got.Deepstack[k], ref.Deepstack[k]))
	}
	return worst
}

// times prints what each kernel of one 8B block takes at 1,024 patches.
func (st *selftest) times(newBackend func() (backend.Backend, error)) {
	if st.noTimes {
		return
	}
	sh := conformance.Qwen3VL8B
	fmt.Fprintf(st.w, "  time per kernel, one block of Qwen3-VL-8B's tower at %d patches (BF16 weights; fastest of %d passes):\n", sh.Patches, conformance.Reps)
	ts, err := conformance.Time(newBackend, sh)
	if err != nil {
		st.check("making the backend", false, err.Error())
		return
	}
	for _, t := range ts {
		if t.Err != nil {
			st.check("  "+t.Name, false, t.Err.Error())
			continue
		}
		rate := ""
		if g := t.GFLOPS(); g > 0 {
			rate = fmt.Sprintf("  %.0f GFLOP/s", g)
		}
		fmt.Fprintf(st.w, "    %-52s %9.3f ms%s\n", t.Name, engine.Millis(t.Time), rate)
	}
}
