package selftest

// selftest_child.go: selftest's Metal section, run in child processes. The child runs the
// section's checks in a fixed order — the device, library and pipelines; a first pass; every
// conformance case; the towers in both residency modes; the kernel times — and writes each as
// it starts and ends, as JSON lines on its stdout. The parent prints them as they come. A
// child that dies (a signal, a Go runtime crash, an exit without "done") or falls silent for
// too long fails the check it had started, with how it ended and its stderr; the parent then
// starts another child from the next check, so one fault costs one check, not the section.
//
// Invariant: the parent counts a check as passed only from the child's own record of it;
// a check the child started and never finished is a failure. Mutation that would silently
// break it: resuming from the check after the last one recorded instead of the last one
// started — a crashing check would vanish from the report.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/metal"
	"github.com/turbospark/inspector/shaders"
)

// childEvent is one line of a selftest child's stdout.
type childEvent struct {
	Kind   string            `json:"kind"` // start, check, note, skip, device, time, opsdone, done
	Index  int               `json:"index,omitempty"`
	Name   string            `json:"name,omitempty"`
	Check  *checkRecord      `json:"check,omitempty"`
	Text   string            `json:"text,omitempty"`
	Device *metal.DeviceInfo `json:"device,omitempty"`
	Time   *timeRecord       `json:"time,omitempty"`
}

// childSilence is how long a selftest child may go without an event before it counts as
// hung (a conformance case takes milliseconds, a tower or the kernel times seconds).
func childSilence() time.Duration { return childLimit(2 * time.Minute) }

// metal runs the Metal section in children where this build has Metal (or the tests'
// stand-in GPU), else says why it is skipped. A child that dies at the device's set-up or the
// first pass, or two children in a row that die at their first check, mean the GPU fails
// before any check can run: the section stops there (one FAIL, the rest counted as not run)
// instead of starting a child per check that would die the same way.
func (st *selftest) metal(towers []selftestTower) {
	fmt.Fprintln(st.w, "\nmetal:")
	st.section(metal.Name)
	if setting, err := MetalSetting(); err != nil {
		st.skip(err.Error())
		return
	} else if setting == "off" {
		st.skip("Metal is off (" + EnvMetal + "=off)")
		return
	}
	if !metal.Possible() && !StandinGPU() {
		st.skip(metal.Check().Error())
		return
	}
	steps, closeSteps := metalSteps(towers, st.noTimes)
	closeSteps()
	total := len(steps)
	firstCheckDeaths := 0
	for from, runs := 0, 0; from >= 0 && from < total; runs++ {
		if runs > 1000 {
			st.check("the Metal section", false, "stopped after 1,000 child processes")
			break
		}
		end := st.metalChild(from)
		if end.next < 0 && end.died >= 0 { // no child could start from here
			st.stopMetal(total-end.died, "the section's child could not start")
			return
		}
		switch {
		case end.died < 0:
			firstCheckDeaths = 0
		case end.died < metalSetupSteps:
			st.stopMetal(total-end.died-1, "the GPU fails before any check can run (the child died at "+steps[end.died].name+")")
			return
		case end.died == from:
			if firstCheckDeaths++; firstCheckDeaths >= 2 {
				st.stopMetal(total-end.died-1, "the GPU fails before any check can run (two children in a row died at their first check)")
				return
			}
		default:
			firstCheckDeaths = 0
		}
		from = end.next
	}
}

// metalSetupSteps are the section's first steps, the device's set-up and the first pass: a
// death there is the GPU's, not one check's.
const metalSetupSteps = 2

// stopMetal ends the Metal section early: notRun checks are left, and why.
func (st *selftest) stopMetal(notRun int, why string) {
	if notRun <= 0 {
		return
	}
	st.sec.NotRun += notRun
	st.report.NotRun += notRun
	st.note(fmt.Sprintf("%d checks not run: %s", notRun, why))
}

// childEnd is how a child ended: where the next child starts (-1: the section is done, or
// with died >= 0, no child could start at died), and the check it died at (-1: none).
type childEnd struct{ next, died int }

// resultKinds are the events that report a started check's result.
var resultKinds = map[string]bool{"check": true, "skip": true, "time": true, "opsdone": true}

// metalChild runs a child from check from on.
func (st *selftest) metalChild(from int) childEnd {
	self, err := probeExe()
	if err != nil {
		st.check("starting the Metal section's child", false, err.Error())
		return childEnd{-1, from}
	}
	args := sectionArgs(from, st.noTimes)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		st.check("starting the Metal section's child", false, err.Error())
		return childEnd{-1, from}
	}
	events := make(chan childEvent)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev childEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				events <- ev
			}
		}
	}()
	// started is the check under way; reported, whether its result came. A check followed by
	// the next one's start (or by done) without a result failed to report it: a FAIL.
	started, reported, done, hung := childEvent{Index: -1}, false, false, false
	unreported := func() {
		if started.Index >= 0 && !reported {
			st.record(checkRecord{Name: started.Name, Error: "no result reported", Case: strings.Contains(started.Name, "/")})
		}
	}
	silence := childSilence()
	timer := time.NewTimer(silence)
	defer timer.Stop()
	for open := true; open; {
		var ev childEvent
		select {
		case ev, open = <-events:
			if !open {
				break
			}
			timer.Reset(silence)
			switch ev.Kind {
			case "start":
				unreported()
				started, reported = ev, false
			case "done":
				unreported()
				done = true
			default:
				reported = reported || resultKinds[ev.Kind]
				st.apply(ev)
			}
		case <-timer.C:
			hung = true
			cancel() // kills the child; its stdout then closes
		}
	}
	err = cmd.Wait()
	if done && err == nil {
		return childEnd{-1, -1}
	}
	why := childDeath(ctx, err, stderr.String(), silence)
	if hung {
		why = fmt.Sprintf("did not finish within %v (hung) and was killed", silence)
		if tail := lastLines(stderr.String(), 3, 400); tail != "" {
			why += ": " + tail
		}
	}
	if started.Index < 0 || started.Index < from {
		st.check("starting the Metal section's child", false, "the child "+why)
		return childEnd{-1, from}
	}
	if reported { // it died between checks: the next one was not started
		st.record(checkRecord{Name: "after " + strings.TrimSpace(started.Name), Error: "the child " + why})
		return childEnd{started.Index + 1, -1}
	}
	st.record(checkRecord{Name: started.Name, Error: "the child " + why, Case: strings.Contains(started.Name, "/")})
	return childEnd{started.Index + 1, started.Index}
}

// apply prints and records one event of a child.
func (st *selftest) apply(ev childEvent) {
	switch ev.Kind {
	case "check":
		if ev.Check != nil {
			st.record(*ev.Check)
		}
	case "note":
		st.note(ev.Text)
	case "skip":
		st.skip(ev.Text)
	case "device":
		st.device(ev.Device)
	case "time":
		if ev.Time != nil {
			st.time(*ev.Time)
		}
	case "opsdone":
		st.opsSummary()
	}
}

// device prints and keeps what the GPU is and how its pipelines were made.
func (st *selftest) device(info *metal.DeviceInfo) {
	if info == nil {
		return
	}
	st.sec.Device = info
	fmt.Fprintf(st.w, "  %s, GPU family %s, %s; unified memory %v, max buffer %s, working set %s\n",
		info.Name, info.Family, info.OS, info.UnifiedMemory, engine.FormatBytes(info.MaxBuffer), engine.FormatBytes(info.WorkingSet))
	for _, p := range info.PipelineInfo {
		fmt.Fprintf(st.w, "    pipeline %-18s %4d threads per threadgroup at most, simdgroups of %d\n", p.Name, p.MaxThreads, p.ExecutionWidth)
	}
}

// childStep is one check of the Metal section, as a child runs it.
type childStep struct {
	name string
	run  func(emit func(childEvent))
}

// MetalChild is the child: the Metal section's checks from from on, as events on w.
func MetalChild(from int, noTimes bool, w io.Writer) error {
	emit, broken := childEmitter(w)
	towers, cleanup, err := selftestTowers()
	if err != nil {
		return err
	}
	defer cleanup()
	steps, closeSteps := metalSteps(towers, noTimes)
	defer closeSteps()
	for i, s := range steps {
		if i < from {
			continue
		}
		emit(childEvent{Kind: "start", Index: i, Name: s.name})
		if i == from {
			injectChildStart(from == 0)
		}
		injectFault(s.name)
		setDataFault(s.name)
		mute := muted(s.name)
		stop := false
		s.run(func(ev childEvent) {
			if ev.Kind == "done" { // a step that ends the section (the device failed)
				stop = true
				return
			}
			if !mute {
				emit(ev)
			}
		})
		setDataFault("")
		if stop {
			break
		}
	}
	emit(childEvent{Kind: "done"})
	return *broken
}

// childEmitter writes events as JSON lines on w. JSON has no NaN or Inf: a record's
// non-finite numbers travel as text with the check failed (checkRecord.finite); an event that
// cannot be encoded anyway is replaced by a failed check saying why, so a result is never
// silently missing. The error is the first write that failed (the parent is gone).
func childEmitter(w io.Writer) (func(childEvent), *error) {
	var broken error
	emit := func(ev childEvent) {
		if broken != nil {
			return
		}
		if ev.Check != nil {
			c := ev.Check.finite()
			ev.Check = &c
		}
		if ev.Time != nil {
			t := ev.Time.finite()
			ev.Time = &t
		}
		line, err := json.Marshal(ev)
		if err != nil {
			name := ev.Name
			if ev.Check != nil {
				name = ev.Check.Name
			}
			line, _ = json.Marshal(childEvent{Kind: "check", Check: &checkRecord{Name: name,
				Error: fmt.Sprintf("the child could not report its %s event: %v", ev.Kind, err)}})
		}
		_, broken = w.Write(append(line, '\n'))
	}
	return emit, &broken
}

// newMetalBackend is the section's backend: the GPU, or the tests' stand-in.
func newMetalBackend() (backend.Backend, error) {
	if StandinGPU() { // its ops spoil their outputs where a data fault is injected (testhooks.go)
		return standinMetal(1), nil
	}
	return metal.New()
}

// deviceInfo is the GPU's description (the stand-in's for tests).
func deviceInfo() (metal.DeviceInfo, error) {
	if StandinGPU() { // tests: INSPECTOR_TEST_FALLBACKS names families that "did not build"
		return metal.DeviceInfo{Name: "stand-in GPU (the CPU engine)", Family: "none", OS: osVersion(), FamilyErrors: testFallbacks()}, nil
	}
	return metal.Device()
}

// metalSteps are the section's checks, in order; the conformance cases share one backend,
// closed by the returned func.
func metalSteps(towers []selftestTower, noTimes bool) ([]childStep, func()) {
	check := func(emit func(childEvent), c checkRecord) { emit(childEvent{Kind: "check", Check: &c}) }
	steps := []childStep{
		{"device, library and pipelines", func(emit func(childEvent)) {
			info, err := deviceInfo()
			if err != nil {
				if isUnsupported(err) {
					emit(childEvent{Kind: "skip", Text: err.Error()})
				} else {
					check(emit, checkRecord{Name: "device, library and pipelines", Error: err.Error()})
				}
				emit(childEvent{Kind: "done"})
				return
			}
			emit(childEvent{Kind: "device", Device: &info})
			check(emit, checkRecord{Name: "library compiled, pipelines made", OK: true,
				Detail: fmt.Sprintf("%d pipelines in %.0f ms", info.Pipelines, engine.Millis(info.CompileTime))})
			for _, f := range info.Fallbacks { // an optional kernel without a pipeline: its ops run another one
				emit(childEvent{Kind: "note", Text: f + "; that head dim runs the scalar attention kernel"})
			}
			for _, f := range info.FamilyErrors {
				emit(childEvent{Kind: "note", Text: f})
			}
		}},
		{"a first pass on the GPU", func(emit func(childEvent)) {
			c := checkRecord{Name: "a first pass on the GPU", OK: true, Detail: "exact"}
			if !StandinGPU() {
				if err := metal.Check(); err != nil {
					c = checkRecord{Name: c.Name, Error: err.Error()}
				}
			}
			check(emit, c)
		}},
	}
	var be backend.Backend
	suite := conformance.NewSuite()
	closeAll := func() {
		if be != nil {
			be.Close()
			be = nil
		}
		suite.Close()
	}
	for _, c := range conformance.Cases() {
		steps = append(steps, childStep{c.Name, func(emit func(childEvent)) {
			if be == nil {
				b, err := newMetalBackend()
				if err != nil {
					check(emit, checkRecord{Name: c.Name, Case: true, Error: "making the backend: " + err.Error()})
					return
				}
				be = b
			}
			check(emit, caseRecord(c.Check(suite, be)))
		}})
	}
	steps = append(steps, childStep{"the conformance table's summary", func(emit func(childEvent)) {
		emit(childEvent{Kind: "opsdone"})
	}})
	for _, t := range towers {
		for _, mode := range []engine.ResidencyMode{engine.Mapped, engine.Pread} {
			steps = append(steps, childStep{fmt.Sprintf("  %s, %s", t.name, mode), func(emit func(childEvent)) {
				if be != nil { // the cases' backend is done: one backend at a time
					be.Close()
					be = nil
				}
				check(emit, towerCheck(t, mode, newMetalBackend, 1e-5))
			}})
		}
	}
	if !noTimes {
		steps = append(steps, childStep{"time per kernel", func(emit func(childEvent)) {
			info, _ := deviceInfo()
			for _, t := range kernelTimes(newMetalBackend, info.Name) {
				emit(childEvent{Kind: "time", Time: &t})
			}
		}})
	}
	return steps, closeAll
}

// isUnsupported says whether err means this machine cannot run Metal at all.
func isUnsupported(err error) bool { return errors.Is(err, metal.ErrUnsupported) }

// ModelGPU is the performance model's GPU for a device name ("Apple M3 Max"), if it knows it.
func ModelGPU(device string) (shaders.GPU, bool) {
	if device == "" {
		return shaders.GPU{}, false
	}
	return shaders.GPUByName(strings.TrimPrefix(device, "Apple "))
}
