package selftest

// probe.go: Metal is first touched in a child process. A fault in C, Objective-C,
// libffi or Apple's compiler (SIGSEGV, SIGABRT, an uncaught NSException, a validation-layer
// assertion) is not a Go panic: recover cannot see it, and in this process it would close the
// window before the CPU engine is offered. So before this process touches Metal, a child
// running the same binary does all of it — the device, the library compile, the pipelines and
// one dispatch whose numbers must be exact (metal.Check) — and answers on its stdout. A child
// that crashed, was killed or hung means: the CPU, the reason said (the status line, `note:`,
// the JSON report), and remembered until the binary or the OS changes or the user asks again
// (Settings ▸ Retry Metal, or INSPECTOR_METAL=retry). INSPECTOR_METAL=off skips Metal
// entirely.
//
// Invariant: metal.Check, New and Device run in this process only after a probe child
// answered that they worked there. Mutation that would silently break it: calling
// metal.Check before the probe (or after a failed one) — a crash in the bridge takes the
// whole app down on the first Mac, CPU users included.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/internal/cachedir"
	"github.com/turbospark/inspector/metal"
)

const (
	// EnvMetal: "off" never touches Metal; "retry" forgets a remembered failure first.
	EnvMetal = "INSPECTOR_METAL"
	// EnvTestGPU and EnvTestFault: the tests' build's hooks (testhooks.go); the release build
	// reads neither.
	EnvTestGPU   = "INSPECTOR_TEST_GPU"
	EnvTestFault = "INSPECTOR_TEST_FAULT"
	// probeTimeout bounds the probe child: the first compile of the library on a Mac (4
	// units, ~31 pipelines, safe math) is not cached yet and can take tens of seconds on a
	// busy machine; then every pipeline runs once (metal.Probe).
	probeTimeout = 120 * time.Second
)

// probeExe is the program a probe child runs: this one (tests point it at the built binary).
var probeExe = os.Executable

// probeOutcome is a probe's answer (the child writes it as JSON).
type probeOutcome struct {
	OK          bool   `json:"ok"`
	Unsupported bool   `json:"unsupported,omitempty"` // this machine cannot run Metal at all
	Reason      string `json:"reason,omitempty"`      // why not
	Device      string `json:"device,omitempty"`
	// Fallbacks are the kernel families (or kernels) that did not build on this GPU and run
	// their fallbacks (DeviceInfo.FamilyErrors and Fallbacks).
	Fallbacks []string `json:"fallbacks,omitempty"`
	Crashed   bool     `json:"crashed,omitempty"` // the child died, was killed or hung
	// Signaled: the child died by a signal (a crash in C, Objective-C, libffi): only such a
	// death is remembered; a hang or an exit is tried again at the next start.
	Signaled bool   `json:"signaled,omitempty"`
	Key      string `json:"key,omitempty"` // the binary and OS it was made on (remembered crashes)
	When     string `json:"when,omitempty"`
}

// err is the outcome as an error (nil when Metal may be used).
func (o probeOutcome) err() error {
	switch {
	case o.OK:
		return nil
	case o.Unsupported: // errors.Is(err, metal.ErrUnsupported), worded as metal said it
		return fmt.Errorf("%w%s", metal.ErrUnsupported, strings.TrimPrefix(o.Reason, metal.ErrUnsupported.Error()))
	}
	return errors.New(o.Reason)
}

// probeState caches the process's probe; Retry forgets it.
var probeState struct {
	sync.Mutex
	done    bool
	outcome probeOutcome
}

// metalOK says whether this process may use Metal, probing in a child first (once per
// process); nil means New and Check may run here.
func metalOK() error {
	probeState.Lock()
	defer probeState.Unlock()
	if !probeState.done {
		probeState.outcome, probeState.done = probeMetal(), true
	}
	if err := probeState.outcome.err(); err != nil {
		return err
	}
	if StandinGPU() {
		return nil
	}
	return metal.Check()
}

// metalFallbacksNote says which kernel families run their fallbacks on this GPU ("" when
// none do, or before a probe).
func metalFallbacksNote() string {
	probeState.Lock()
	defer probeState.Unlock()
	if !probeState.outcome.OK || len(probeState.outcome.Fallbacks) == 0 {
		return ""
	}
	return "Metal runs fallback kernels: " + strings.Join(probeState.outcome.Fallbacks, "; ")
}

// retryMetal forgets a remembered failure and probes again.
func retryMetal() error {
	forgetProbe()
	probeState.Lock()
	probeState.done = false
	probeState.Unlock()
	return metalOK()
}

// MetalSetting is INSPECTOR_METAL's value, or an error naming a value that is not one of its
// settings (Metal is then not used: a typo must not be read as "on").
func MetalSetting() (string, error) {
	switch v := os.Getenv(EnvMetal); v {
	case "", "off", "retry":
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q is not a setting (want off or retry, or leave it unset): Metal is not used", EnvMetal, v)
	}
}

// probeMetal decides without touching Metal here: off, remembered, or a child's answer.
func probeMetal() probeOutcome {
	setting, err := MetalSetting()
	switch {
	case err != nil:
		return probeOutcome{Reason: err.Error()}
	case setting == "off":
		return probeOutcome{Reason: "Metal is off (" + EnvMetal + "=off)"}
	case setting == "retry":
		forgetProbe()
	}
	if !metal.Possible() && !StandinGPU() { // nothing of Metal exists in this build to crash
		if err := metal.Check(); err != nil {
			return probeOutcome{Unsupported: errors.Is(err, metal.ErrUnsupported), Reason: err.Error()}
		}
		return probeOutcome{OK: true}
	}
	key := probeKey()
	if o, ok := rememberedProbe(key); ok {
		o.Reason = fmt.Sprintf("the Metal start-up probe failed on %s: it %s; to try again: Settings ▸ Retry Metal, or %s=retry", o.When, o.Reason, EnvMetal)
		return o
	}
	o := runProbeChild()
	switch {
	case o.Crashed && o.Signaled:
		o.Key, o.When = key, time.Now().Format("2006-01-02 15:04")
		rememberProbe(o)
		o.Reason = fmt.Sprintf("the Metal start-up probe %s; to try again: Settings ▸ Retry Metal, or %s=retry", o.Reason, EnvMetal)
	case o.Crashed:
		o.Reason = fmt.Sprintf("the Metal start-up probe %s; the next start tries again", o.Reason)
	}
	return o
}

// runProbeChild runs `inspector metal-probe` and reads its answer; a child that does not
// answer is a crash, described from how it ended and its stderr.
func runProbeChild() probeOutcome {
	self, err := probeExe()
	if err != nil {
		return probeOutcome{Reason: "cannot find this program to probe Metal in a child: " + err.Error()}
	}
	limit := childLimit(probeTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, probeArgs()...)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err = cmd.Run()
	var o probeOutcome
	if err == nil && json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &o) == nil {
		return o
	}
	return probeOutcome{Crashed: true, Signaled: diedBySignal(ctx, err, stderr.String()),
		Reason: childDeath(ctx, err, stderr.String(), limit)}
}

// diedBySignal says whether a child that gave no answer crashed: a signal of a fault (SIGSEGV,
// SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP, SIGSYS). Not our timeout's kill, and not a signal a
// user sends the process group (Ctrl-C's SIGINT, SIGTERM, SIGHUP, Ctrl-\'s SIGQUIT, a kill -9):
// those stop the child, they say nothing of Metal.
func diedBySignal(ctx context.Context, err error, stderr string) bool {
	sig, ok := deathSignal(ctx, err, stderr)
	return ok && faultSignals[sig]
}

// deathSignal is the signal that ended a child, from the kernel's report or from the Go
// runtime's (it catches SIGSEGV and SIGABRT, prints the signal and exits 2); none where our
// context killed it or it exited.
func deathSignal(ctx context.Context, err error, stderr string) (syscall.Signal, bool) {
	var ee *exec.ExitError
	if ctx.Err() != nil || !errors.As(err, &ee) {
		return 0, false
	}
	ws, _ := ee.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return ws.Signal(), true
	}
	if m := crashSignal.FindStringSubmatch(stderr); ws.ExitStatus() == 2 && m != nil {
		return unix.SignalNum(m[1]), true
	}
	return 0, false
}

// faultSignals are the signals a fault in the child's own code raises.
var faultSignals = map[syscall.Signal]bool{syscall.SIGSEGV: true, syscall.SIGBUS: true, syscall.SIGABRT: true,
	syscall.SIGILL: true, syscall.SIGFPE: true, syscall.SIGTRAP: true, syscall.SIGSYS: true}

// childDeath says how a child that gave no answer ended: killed by a signal, crashed with
// one (the Go runtime prints "SIGSEGV: segmentation violation" and exits 2), hung past
// limit, or exited; with the last lines of its stderr.
func childDeath(ctx context.Context, err error, stderr string, limit time.Duration) string {
	var what string
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		what = fmt.Sprintf("did not answer within %v (hung) and was killed", limit)
	case errors.As(err, &ee):
		if sig, ok := deathSignal(ctx, err, stderr); ok {
			what = "was killed by " + unix.SignalName(sig)
		} else {
			what = fmt.Sprintf("exited with status %d without an answer", ee.ExitCode())
		}
	case err != nil:
		what = "could not run: " + err.Error()
	default:
		what = "gave no answer"
	}
	if sum := crashSummary(stderr); sum != "" {
		what += " (" + sum + ")"
	}
	return what
}

// crashSummary is what a user needs of a dead child's stderr: for a Go runtime crash report,
// its first line, whether the signal came in C code, and the first frame outside the runtime
// (where it died: "main._Cfunc_ffi_call0()"); else its last lines.
func crashSummary(stderr string) string {
	lines := strings.Split(stderr, "\n")
	head := -1
	for i, l := range lines {
		if goCrash.MatchString(l) {
			head = i
			break
		}
	}
	if head < 0 {
		return lastLines(stderr, 3, 400)
	}
	first := strings.TrimSpace(lines[head])
	if sig, desc, ok := strings.Cut(first, ": "); ok && strings.HasPrefix(sig, "SIG") {
		first = desc // "SIGSEGV: segmentation violation": the signal is named already
	}
	parts := []string{first}
	inGoroutine := false
	for _, l := range lines[head+1:] {
		switch {
		case strings.Contains(l, "signal arrived during cgo execution"):
			parts = append(parts, "in C code (cgo)")
		case strings.HasPrefix(l, "goroutine "):
			inGoroutine = true
		case inGoroutine && l != "" && !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "runtime."):
			return strings.Join(append(parts, "at "+strings.TrimSpace(l)), "; ")
		}
	}
	return strings.Join(parts, "; ")
}

// goCrash is the first line of a Go runtime crash report.
var goCrash = regexp.MustCompile(`^(SIG[A-Z]+: |panic: |fatal error: )`)

// crashSignal finds the signal in a Go runtime crash report ("SIGSEGV: segmentation
// violation", "[signal SIGSEGV: ...]", "SIGABRT: abort").
var crashSignal = regexp.MustCompile(`(?m)(?:^|\[signal )(SIG[A-Z]+)\b`)

// lastLines is the last n non-empty lines of s, joined, at most max bytes (the end kept).
func lastLines(s string, n, max int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	s = strings.Join(keep[len(keep)-min(n, len(keep)):], " | ")
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}

// tailBuffer keeps the first and the last max/2 bytes written to it.
type tailBuffer struct {
	max        int
	head, tail []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	if room := t.max/2 - len(t.head); room > 0 {
		t.head = append(t.head, p[:min(room, len(p))]...)
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > t.max/2 {
		t.tail = t.tail[len(t.tail)-t.max/2:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if len(t.tail) < t.max/2 {
		return string(t.tail)
	}
	return string(t.head) + "\n…\n" + string(t.tail)
}

// probeKey names this binary and OS: a remembered failure holds until either changes.
func probeKey() string {
	exe, _ := os.Executable()
	var size, mod int64
	if st, err := os.Stat(exe); err == nil {
		size, mod = st.Size(), st.ModTime().UnixNano()
	}
	var u unix.Utsname
	unix.Uname(&u)
	return fmt.Sprintf("%s %d %d; %s %s %s", exe, size, mod, unix.ByteSliceToString(u.Sysname[:]),
		unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]))
}

// probeMemory is where a failed probe is remembered.
func probeMemory() string { return filepath.Join(cachedir.Dir(), "metal-probe.json") }

// rememberedProbe is the remembered failure for key, if any.
func rememberedProbe(key string) (probeOutcome, bool) {
	var o probeOutcome
	path := probeMemory()
	if path == "" {
		return o, false
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &o) != nil || o.Key != key || !o.Crashed {
		return probeOutcome{}, false
	}
	return o, true
}

// rememberProbe writes the failure down (best effort: a read-only cache only means the next
// start probes again).
func rememberProbe(o probeOutcome) {
	path := probeMemory()
	if path == "" || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	b, _ := json.MarshalIndent(o, "", "  ")
	os.WriteFile(path, append(b, '\n'), 0o644)
}

// forgetProbe removes a remembered failure.
func forgetProbe() {
	if path := probeMemory(); path != "" {
		os.Remove(path)
	}
}

// ProbeChild is the child (`inspector metal-probe`): it touches Metal — the device, the library, a first pass, then
// every pipeline once on tiny shapes against float64 references (metal.Probe) — and answers
// with a probeOutcome on stdout. A crash here is what the parent is for; a kernel that
// computes wrong numbers is a refusal with the reason.
func ProbeChild(stdout io.Writer) error {
	injectFault("probe")
	o := probeOutcome{OK: true}
	var kernels func() (metal.PipelineProbe, error)
	switch {
	case StandinGPU():
		o.Device = "stand-in GPU (the CPU engine)"
		o.Fallbacks = testFallbacks() // tests: a GPU whose families did not all build
		setDataFault("probe")
		kernels = func() (metal.PipelineProbe, error) { return metal.ProbePipelines(newMetalBackend) }
	default:
		if err := metal.Check(); err != nil {
			o = probeOutcome{Unsupported: errors.Is(err, metal.ErrUnsupported), Reason: err.Error()}
		} else if info, err := metal.Device(); err == nil {
			o.Device = info.Name
			o.Fallbacks = append(append([]string(nil), info.FamilyErrors...), info.Fallbacks...)
		}
		kernels = metal.Probe
	}
	if o.OK {
		if _, err := kernels(); err != nil {
			o = probeOutcome{Reason: "the Metal start-up probe found kernels that compute wrong numbers on this GPU: " + err.Error()}
		}
	}
	return json.NewEncoder(stdout).Encode(o)
}
