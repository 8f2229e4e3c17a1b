package selftest

// selftest.go: `inspector selftest`, the first thing to run on a new machine (above all the
// first Mac): what the platform and the GPU are, every kernel against float64 references on
// random inputs, two towers end to end in both residency modes against the CPU engine, and
// what each kernel takes at a real model's shapes, beside the performance model's time. It
// never crashes: a check that panics is a failed check, and what cannot run here (Metal off
// macOS, on an Intel Mac, on a GPU below Apple7, before macOS 14) is a skip with its reason.
//
// The Metal section runs in child processes (selftest_child.go): a fault in C, Objective-C,
// libffi or Apple's compiler kills a child, not this process; the check that was running is
// reported as failed, with how the child died and its stderr, and a new child goes on from
// the next check. `--report FILE` writes everything as JSON for a bug report.
//
// Invariant: every number printed is compared with a reference computed from the same
// inputs on the CPU engine (single-threaded) or in float64, never with the backend's own
// output. Mutation that would silently break it: comparing the Metal tower with a second
// Metal run — a wrong kernel would agree with itself.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
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
	"github.com/turbospark/inspector/shaders"
)

// Report is the whole result, as --report writes it.
type Report struct {
	Machine  machineReport       `json:"machine"`
	Sections []*sectionReport    `json:"sections"`
	Coverage map[string][]string `json:"coverage"` // every library kernel -> the conformance cases that dispatch it
	// CoverageNote says which kernels this GPU ran fallbacks for instead (the cases above
	// dispatched those, not the kernel), from the Metal section's device.
	CoverageNote string `json:"coverage_note,omitempty"`
	Passed       int    `json:"passed"`
	Failed       int    `json:"failed"`
	Skipped      int    `json:"skipped"`
	NotRun       int    `json:"not_run,omitempty"` // checks a section stopped before (the GPU failed early)
}

type machineReport struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	OSVersion string `json:"os_version"`
	CPUs      int    `json:"cpus"`
	Go        string `json:"go"`
	Darwinkit string `json:"darwinkit"`
}

// sectionReport is one backend's part.
type sectionReport struct {
	Backend string            `json:"backend"`
	Skipped string            `json:"skipped,omitempty"` // why the section did not run
	Device  *metal.DeviceInfo `json:"device,omitempty"`
	Checks  []checkRecord     `json:"checks"`
	Times   []timeRecord      `json:"times,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
	NotRun  int               `json:"not_run,omitempty"` // checks not run: the section stopped (why is in Notes)
}

// checkRecord is one check: a conformance case, a tower, a step of the device's set-up. It
// travels as JSON (a selftest child's events, --report), which has no NaN or Inf: finite()
// turns a non-finite number into NonFinite's text and a failure before it is encoded.
type checkRecord struct {
	Name   string  `json:"name"`
	OK     bool    `json:"ok"`
	Detail string  `json:"detail,omitempty"`
	RelErr float64 `json:"rel_err,omitempty"`
	// NonFinite names a number that was NaN or ±Inf where JSON needs a finite one
	// ("rel_err NaN"); such a check has failed.
	NonFinite string         `json:"non_finite,omitempty"`
	Tol       float64        `json:"tolerance,omitempty"`
	Error     string         `json:"error,omitempty"`
	Millis    float64        `json:"ms,omitempty"`
	Binding   *metal.Binding `json:"binding,omitempty"` // a Metal tower: how its weights were bound
	Case      bool           `json:"conformance_case,omitempty"`
}

// finite is c ready for JSON: a NaN or ±Inf number becomes NonFinite's text (and the number
// 0), and the check a failure, saying so where it said nothing.
func (c checkRecord) finite() checkRecord {
	var bad []string
	for _, f := range []struct {
		name string
		v    *float64
	}{{"rel_err", &c.RelErr}, {"tolerance", &c.Tol}, {"ms", &c.Millis}} {
		if text, ok := nonFinite(*f.v); ok {
			bad = append(bad, f.name+" "+text)
			*f.v = 0
		}
	}
	if len(bad) > 0 {
		c.NonFinite, c.OK = strings.Join(bad, ", "), false
		if c.Error == "" {
			c.Error = "not a finite number: " + c.NonFinite
		}
	}
	return c
}

// nonFinite is "NaN", "+Inf" or "-Inf" for such a number.
func nonFinite(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "NaN", true
	case math.IsInf(v, 1):
		return "+Inf", true
	case math.IsInf(v, -1):
		return "-Inf", true
	}
	return "", false
}

// timeRecord is one kernel's time at the 8B shapes, and the model's for the same op.
type timeRecord struct {
	Name    string  `json:"name"`
	Millis  float64 `json:"ms"`
	GFLOPs  float64 `json:"gflops,omitempty"`
	ModelMS float64 `json:"model_ms,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// finite is t ready for JSON: a non-finite time is an error; a non-finite rate or model
// time (a time of 0) is left out.
func (t timeRecord) finite() timeRecord {
	if text, ok := nonFinite(t.Millis); ok {
		t.Millis = 0
		if t.Error == "" {
			t.Error = "the time is " + text
		}
	}
	for _, v := range []*float64{&t.GFLOPs, &t.ModelMS} {
		if _, ok := nonFinite(*v); ok {
			*v = 0
		}
	}
	return t
}

// selftest runs the checks and renders them as they come.
type selftest struct {
	w       io.Writer
	noTimes bool
	report  Report
	sec     *sectionReport
}

func (st *selftest) section(name string) {
	st.sec = &sectionReport{Backend: name}
	st.report.Sections = append(st.report.Sections, st.sec)
}

// record counts and prints a check (cases that pass are summed up per op, not printed).
func (st *selftest) record(c checkRecord) {
	if st.sec == nil {
		st.section("?")
	}
	c = c.finite()
	st.sec.Checks = append(st.sec.Checks, c)
	if c.OK {
		st.report.Passed++
	} else {
		st.report.Failed++
	}
	if c.Case && c.OK {
		return
	}
	mark := "ok"
	if !c.OK {
		mark = "FAIL"
	}
	detail := c.Detail
	if c.Error != "" {
		detail = c.Error
	}
	name := c.Name
	if c.Case {
		name = "  " + name
	}
	fmt.Fprintf(st.w, "  %-52s %-4s %s\n", name, mark, detail)
}

// check records a plain check.
func (st *selftest) check(name string, ok bool, detail string) {
	st.record(checkRecord{Name: name, OK: ok, Detail: detail})
}

// skip records that a section did not run, and why.
func (st *selftest) skip(why string) {
	st.sec.Skipped = why
	st.report.Skipped++
	fmt.Fprintf(st.w, "  skipped: %s\n", why)
}

// note prints and keeps an informational line.
func (st *selftest) note(text string) {
	st.sec.Notes = append(st.sec.Notes, text)
	fmt.Fprintf(st.w, "  note: %s\n", text)
}

// Options are what `inspector selftest` was asked.
type Options struct {
	Which   string // all, or one backend's name (CheckWhich)
	NoTimes bool   // skip the kernel timings at the 8B model's shapes
	// Save (nil: none) is handed the whole result after the summary line, before the verdict
	// (--report writes it there).
	Save func(r *Report) error
}

// WhichHelp says what Options.Which takes, for the flag's help.
func WhichHelp() string {
	return "what to test: all (the CPU, and Metal where it runs), " + backend.OrList([]string{cpu.Name, metal.Name})
}

// CheckWhich refuses a Which that is neither all nor a section's backend.
func CheckWhich(which string) error {
	if which != "all" && which != cpu.Name && which != metal.Name {
		return fmt.Errorf("--backend %q: want all, %s", which, backend.OrList([]string{cpu.Name, metal.Name}))
	}
	return nil
}

// Run is `inspector selftest`: the sections o.Which asks for, the kernel coverage and the
// summary on stdout; an error when a check failed, or where Metal must run and was skipped.
func Run(stdout io.Writer, o Options) error {
	if err := CheckWhich(o.Which); err != nil {
		return err
	}
	st := &selftest{w: stdout, noTimes: o.NoTimes}
	st.report.Machine = thisMachine()
	m := st.report.Machine
	fmt.Fprintf(stdout, "inspector selftest: %s/%s (%s), %d CPUs, %s, darwinkit %s\n", m.OS, m.Arch, m.OSVersion, m.CPUs, m.Go, m.Darwinkit)
	towers, cleanup, err := selftestTowers()
	if err != nil {
		return err
	}
	defer cleanup()
	if o.Which != metal.Name {
		st.cpu(towers)
	}
	if o.Which != cpu.Name {
		st.metal(towers)
	}
	st.coverage()
	r := &st.report
	notRun := ""
	if r.NotRun > 0 {
		notRun = fmt.Sprintf(", %d not run", r.NotRun)
	}
	fmt.Fprintf(stdout, "\n%d checks passed, %d failed, %d skipped%s\n", r.Passed, r.Failed, r.Skipped, notRun)
	if o.Save != nil {
		if err := o.Save(r); err != nil {
			return err
		}
	}
	if r.Failed > 0 {
		return fmt.Errorf("%d checks failed", r.Failed)
	}
	if metalMissing(o.Which, st) {
		fmt.Fprintln(stdout, "\nMETAL WAS NOT TESTED on this Mac: see the skipped line above")
		return errors.New("the Metal section was skipped on Apple silicon")
	}
	return nil
}

// metalMissing says whether the Metal section was skipped where it must run: Apple silicon.
func metalMissing(which string, st *selftest) bool {
	if which == cpu.Name || runtime.GOOS != "darwin" || runtime.GOARCH != "arm64" {
		return false
	}
	for _, s := range st.report.Sections {
		if s.Backend == metal.Name && s.Skipped != "" {
			return true
		}
	}
	return false
}

// thisMachine is what the report says of the machine and the build.
func thisMachine() machineReport {
	m := machineReport{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(), Darwinkit: "not in this build"}
	m.OSVersion = osVersion()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/progrium/darwinkit" {
				m.Darwinkit = d.Version
				if d.Replace != nil {
					m.Darwinkit += " => " + d.Replace.Path
					if d.Replace.Version != "" {
						m.Darwinkit += " " + d.Replace.Version
					}
				}
			}
		}
	}
	return m
}

// coverage maps every kernel of the library to the conformance cases that dispatch it
// (through the model backend: the same on every machine) and says if any has none.
func (st *selftest) coverage() {
	cov, _, err := metal.Coverage()
	if err != nil {
		fmt.Fprintf(st.w, "\nkernel coverage: %v\n", err)
		st.report.Failed++
		return
	}
	st.report.Coverage = cov
	if un := metal.Uncovered(cov); len(un) > 0 {
		fmt.Fprintf(st.w, "\nkernel coverage: FAIL: no conformance case dispatches %s\n", strings.Join(un, ", "))
		st.report.Failed++
		return
	}
	st.report.CoverageNote = st.fallbackNote()
	note := ""
	if st.report.CoverageNote != "" {
		note = "; but " + st.report.CoverageNote
	}
	fmt.Fprintf(st.w, "\nkernel coverage: each of the library's %d kernels is dispatched by a conformance case above%s\n", len(cov), note)
}

// fallbackNote says which kernels the Metal section's GPU had no pipeline for, so that the
// cases ran their fallbacks instead, and why ("" where it ran them all, or did not run).
func (st *selftest) fallbackNote() string {
	for _, s := range st.report.Sections {
		d := s.Device
		if s.Backend != metal.Name || d == nil || len(d.FamilyErrors)+len(d.Fallbacks) == 0 {
			continue
		}
		var missing []string
		if len(d.PipelineInfo) > 0 {
			have := map[string]bool{}
			for _, p := range d.PipelineInfo {
				have[p.Name] = true
			}
			for _, k := range shaders.Kernels() {
				if !have[k] {
					missing = append(missing, k)
				}
			}
		}
		what := "some kernels"
		if len(missing) > 0 {
			what = fmt.Sprintf("%d kernels (%s)", len(missing), strings.Join(missing, ", "))
		}
		return fmt.Sprintf("this GPU has no pipeline for %s, and their cases ran the fallbacks instead: %s", what,
			strings.Join(append(append([]string(nil), d.FamilyErrors...), d.Fallbacks...), "; "))
	}
	return ""
}

func newCPUBackend(threads int) func() (backend.Backend, error) {
	return func() (backend.Backend, error) { return cpu.New(threads), nil }
}

// cpu: the CPU engine on all cores against float64 references and against itself on one
// (bit-identical by design). It runs in this process: nothing in it leaves Go.
func (st *selftest) cpu(towers []selftestTower) {
	be := cpu.New(0)
	fmt.Fprintf(st.w, "\ncpu: %s\n", be.Name())
	st.section(cpu.Name)
	be.Close()
	st.ops(newCPUBackend(0))
	for _, t := range towers {
		for _, mode := range []engine.ResidencyMode{engine.Mapped, engine.Pread} {
			st.record(towerCheck(t, mode, newCPUBackend(0), 0))
		}
	}
	st.times(newCPUBackend(0), "")
}

// ops runs the conformance table on one backend: a line per op with its worst case, and a
// line for every case that fails.
func (st *selftest) ops(newBackend func() (backend.Backend, error)) {
	fmt.Fprintln(st.w, "  each op against float64 references (random inputs, odd shapes; worst relative error):")
	res, err := conformance.Run(newBackend)
	if err != nil {
		st.check("making the backend", false, err.Error())
		return
	}
	for _, r := range res {
		st.record(caseRecord(r))
	}
	st.opsSummary()
}

// caseRecord is a conformance result as a check.
func caseRecord(r conformance.Result) checkRecord {
	c := checkRecord{Name: r.Name, OK: r.OK(), RelErr: r.RelErr, Tol: r.Tol, Case: true,
		Detail: fmt.Sprintf("%.2e (tolerance %.0e)", r.RelErr, r.Tol)}
	switch {
	case r.Err != nil:
		c.Error = r.Err.Error()
	case r.Defect != "":
		c.Error = r.Defect
	}
	return c.finite()
}

// opsSummary prints, per op, the cases passed and the worst of them (a failed case was
// printed when it was recorded).
func (st *selftest) opsSummary() {
	type family struct {
		cases int
		worst checkRecord
	}
	var order []string
	families := map[string]*family{}
	for _, c := range st.sec.Checks {
		if !c.Case || !c.OK {
			continue
		}
		name := strings.SplitN(c.Name, "/", 2)[0]
		f := families[name]
		if f == nil {
			f = &family{}
			families[name] = f
			order = append(order, name)
		}
		f.cases++
		if c.RelErr >= f.worst.RelErr || f.cases == 1 {
			f.worst = c
		}
	}
	for _, name := range order {
		f := families[name]
		fmt.Fprintf(st.w, "  %-52s %-4s %s\n", fmt.Sprintf("  %s (%d cases)", name, f.cases), "ok",
			fmt.Sprintf("%.2e (tolerance %.0e; %s)", f.worst.RelErr, f.worst.Tol, f.worst.Name))
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

// runTower runs a whole tower on be (owned from the call on) and keeps every output.
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
	sess, err := engine.NewSession(context.Background(), ck, in, t.dir, "", engine.Settings{Residency: mode, Keep: engine.Keep{Outputs: true}}, be)
	if err != nil {
		return nil, err // NewSession closed be
	}
	if err := sess.RunAll(context.Background()); err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// towerCheck runs a tower on the backend in one residency mode against the CPU engine (one
// thread, mapped); tol 0 asks for bit-identical outputs. A Metal backend says how its
// weights were bound.
func towerCheck(t selftestTower, mode engine.ResidencyMode, newBackend func() (backend.Backend, error), tol float64) (c checkRecord) {
	c.Name = fmt.Sprintf("  %s, %s", t.name, mode)
	ref, err := runTower(t, cpu.New(1), engine.Mapped)
	if err != nil {
		c.Error = "on the CPU: " + err.Error()
		return c
	}
	defer ref.Close()
	worst, start := 0.0, time.Now()
	err = func() (err error) {
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
		if mb, ok := be.(*metal.Backend); ok {
			b := mb.Binding()
			c.Binding = &b
		}
		worst = towerError(sess.Run, ref.Run)
		return towerNonFinite(sess.Run)
	}()
	if err != nil {
		c.Error = err.Error()
		return c
	}
	c.Millis, c.RelErr, c.Tol = engine.Millis(time.Since(start)), worst, tol
	if tol == 0 {
		c.OK, c.Detail = worst == 0, fmt.Sprintf("%.2e (bit-identical expected), %.0f ms", worst, c.Millis)
	} else {
		c.OK, c.Detail = worst <= tol, fmt.Sprintf("%.2e (tolerance %.0e), %.0f ms", worst, tol, c.Millis)
	}
	if b := c.Binding; b != nil {
		c.Detail += fmt.Sprintf("; weights: %d KiB pages, %d regions wrapped, %d not, %d weights copied", b.PageSize>>10,
			b.RegionsWrapped, b.Unwrapped, b.WeightsCopied)
		if b.LastWrapError != "" {
			c.Detail += " (last wrap error: " + b.LastWrapError + ")"
		}
	}
	return c
}

// towerNonFinite names the first output of a tower that holds NaN or Inf (in the order the
// tower computes them), or nil.
func towerNonFinite(got *engine.Run) error {
	for i, out := range got.Probes.Outputs() {
		if d := conformance.NonFinite(out); d != "" {
			return fmt.Errorf("blocks.%d.out: %s", i, strings.TrimPrefix(d, "the output "))
		}
	}
	for k, ds := range got.Deepstack {
		if d := conformance.NonFinite(ds); d != "" {
			return fmt.Errorf("deepstack.%d: %s", k, strings.TrimPrefix(d, "the output "))
		}
	}
	if d := conformance.NonFinite(got.Merger); d != "" {
		return fmt.Errorf("merger: %s", strings.TrimPrefix(d, "the output "))
	}
	return nil
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

// times prints what each kernel of one 8B block takes at 1,024 patches and, for a GPU the
// performance model knows (gpu names it), what the model says it should take.
func (st *selftest) times(newBackend func() (backend.Backend, error), gpu string) {
	if st.noTimes {
		return
	}
	for _, t := range kernelTimes(newBackend, gpu) {
		st.time(t)
	}
}

// time prints and keeps one kernel's time.
func (st *selftest) time(t timeRecord) {
	t = t.finite()
	if len(st.sec.Times) == 0 {
		fmt.Fprintf(st.w, "  time per kernel, one block of Qwen3-VL-8B's tower at %d patches (BF16 weights; fastest of %d passes):\n",
			conformance.Qwen3VL8B.Patches, conformance.Reps)
	}
	st.sec.Times = append(st.sec.Times, t)
	if t.Error != "" {
		st.check("  "+t.Name, false, t.Error)
		return
	}
	rate, model := "", ""
	if t.GFLOPs > 0 {
		rate = fmt.Sprintf("  %.0f GFLOP/s", t.GFLOPs)
	}
	if t.ModelMS > 0 {
		model = fmt.Sprintf("  (model %.3f ms, measured/model %.2f)", t.ModelMS, t.Millis/t.ModelMS)
	}
	fmt.Fprintf(st.w, "    %-52s %9.3f ms%s%s\n", t.Name, t.Millis, rate, model)
}

// kernelTimes times each kernel of one 8B block, and on the model of gpu ("" for none).
func kernelTimes(newBackend func() (backend.Backend, error), gpu string) []timeRecord {
	sh := conformance.Qwen3VL8B
	ts, err := conformance.Time(newBackend, sh)
	if err != nil {
		return []timeRecord{{Name: "making the backend", Error: err.Error()}}
	}
	var model []conformance.Timing
	if g, ok := ModelGPU(gpu); ok {
		model, _ = conformance.Time(func() (backend.Backend, error) { b, _ := metal.NewModel(g); return b, nil }, sh)
	}
	var out []timeRecord
	for i, t := range ts {
		r := timeRecord{Name: t.Name, Millis: engine.Millis(t.Time), GFLOPs: t.GFLOPS()}
		if t.Err != nil {
			r.Error = t.Err.Error()
		}
		if i < len(model) && model[i].Name == t.Name {
			r.ModelMS = engine.Millis(model[i].Time)
		}
		out = append(out, r)
	}
	return out
}
