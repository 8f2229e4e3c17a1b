//go:build inspectortest

package selftest

// testhooks.go: what only the tests' build has (`-tags inspectortest`, which make test and the
// tests' own builds of the binary use; testhooks_release.go is the release build's side, where
// none of it exists and the variables below mean nothing):
//
//   - INSPECTOR_TEST_GPU=cpu-standin: the CPU engine stands in for the GPU, so the probe child,
//     selftest's children and Metal as the default backend run on Linux (the paths a Mac takes);
//   - INSPECTOR_TEST_FALLBACKS=A|B: the stand-in's kernel families that "did not build";
//   - INSPECTOR_TEST_CHILD_SILENCE=3s: how long a child may be silent, instead of minutes;
//   - INSPECTOR_TEST_FAULT: the fault-injection hook of the child processes that touch Metal
//     (the start-up probe, selftest's Metal section). It holds one or more
// WHERE:HOW, separated by ";" (a check's name may hold commas). WHERE is "probe", a selftest check whose name contains it,
// "child-start" (the first check of every selftest child, as a broken driver would fail each
// child's first Metal call) or "child-restart" (the same, but not in the section's first
// child). HOW is how the child fails there:
//
//   - segv (a write through a null pointer in C), abort (C's abort(), as an uncaught
//     NSException or a validation-layer assertion ends), hang (never returns), exit (exits 3
//     without an answer): the child dies as a crash in C, Objective-C or libffi would kill it;
//   - sigint: the child sends SIGINT to its process group, as Ctrl-C in a terminal does;
//   - nan, inf, oob: the stand-in GPU (INSPECTOR_TEST_GPU=cpu-standin) computes, during that
//     check, outputs holding NaN or +Inf, or writes one element past each op's output, as a
//     wrong kernel would;
//   - mute: the child reports nothing of that check (no result event), as a child whose
//     record was lost would.
//
// Only children act on it; the variable means nothing to a parent.
//
// Invariant: the release build reads none of these variables (TestReleaseBuildHasNoTestHooks
// looks for their names in it). Mutation that would silently break it: a hook read outside the
// tagged files — a user's environment, or a stale variable from a test script, would fake a
// crash into their cache or hang a probe.

import (
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
)

// TestHooksBuilt: this build has the hooks.
const TestHooksBuilt = true

// StandinGPU says whether tests asked for the CPU engine as a stand-in GPU.
func StandinGPU() bool { return os.Getenv(EnvTestGPU) == "cpu-standin" }

// standinMetal is the stand-in GPU: the CPU engine under a name of its own, whose ops spoil
// their outputs where a data fault is injected.
func standinMetal(threads int) backend.Backend { return faultyGPU{standinBackend{cpu.New(threads)}} }

// standinBackend is the tests' stand-in GPU: the CPU engine under a name of its own.
type standinBackend struct{ *cpu.Backend }

func (b standinBackend) Name() string { return "stand-in GPU (" + b.Backend.Name() + ")" }

// testFallbacks are the stand-in's kernel families that "did not build" (INSPECTOR_TEST_FALLBACKS).
func testFallbacks() []string {
	if f := os.Getenv("INSPECTOR_TEST_FALLBACKS"); f != "" {
		return strings.Split(f, "|")
	}
	return nil
}

// childLimit is how long a child may take without a word: limit, or INSPECTOR_TEST_CHILD_SILENCE.
func childLimit(limit time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv("INSPECTOR_TEST_CHILD_SILENCE")); err == nil {
		return d
	}
	return limit
}

// faultSpec is one WHERE:HOW of INSPECTOR_TEST_FAULT.
type faultSpec struct{ at, how string }

// faultSpecs parses INSPECTOR_TEST_FAULT.
func faultSpecs() []faultSpec {
	var out []faultSpec
	for _, part := range strings.Split(os.Getenv(EnvTestFault), ";") {
		if at, how, ok := strings.Cut(strings.TrimSpace(part), ":"); ok && at != "" {
			out = append(out, faultSpec{at, how})
		}
	}
	return out
}

// injectFault dies as the first crash fault whose WHERE where contains asks.
func injectFault(where string) {
	for _, f := range faultSpecs() {
		if strings.Contains(where, f.at) {
			crash(f.how)
		}
	}
}

// injectChildStart dies as a child-start fault asks (and, for a child that is not the
// section's first, as a child-restart fault asks): at a child's first check.
func injectChildStart(firstChild bool) {
	for _, f := range faultSpecs() {
		if f.at == "child-start" || (f.at == "child-restart" && !firstChild) {
			crash(f.how)
		}
	}
}

// crash fails the way how names; a data fault (nan, inf, oob) is not a crash.
func crash(how string) {
	switch how {
	case "segv", "abort":
		crashInC(how)
	case "hang":
		for {
			time.Sleep(time.Hour)
		}
	case "exit":
		os.Exit(3)
	case "sigint": // Ctrl-C in a terminal: SIGINT to the whole process group, parent included
		syscall.Kill(0, syscall.SIGINT)
		for {
			time.Sleep(time.Hour)
		}
	}
}

// dataFault is the data fault (nan, inf, oob) the stand-in GPU applies during the check named
// where, or "".
func dataFault(where string) string {
	for _, f := range faultSpecs() {
		if strings.Contains(where, f.at) && (f.how == "nan" || f.how == "inf" || f.how == "oob") {
			return f.how
		}
	}
	return ""
}

// muted says whether a mute fault silences the check named where.
func muted(where string) bool {
	for _, f := range faultSpecs() {
		if strings.Contains(where, f.at) && f.how == "mute" {
			return true
		}
	}
	return false
}

// activeDataFault is the data fault of the check the child is running (one goroutine runs
// the checks).
var activeDataFault string

// setDataFault makes the stand-in GPU apply the data fault of the check named where ("" for
// none).
func setDataFault(where string) {
	activeDataFault = ""
	if where != "" {
		activeDataFault = dataFault(where)
	}
}

// faultyGPU is the stand-in GPU whose every op, after computing its output, spoils it as
// activeDataFault says.
type faultyGPU struct{ backend.Backend }

// spoil applies the active data fault to an op's output: n elements from v.
func (b faultyGPU) spoil(v backend.View, n int) {
	switch activeDataFault {
	case "nan":
		b.Upload(v, []float32{float32(math.NaN())})
	case "inf":
		b.Upload(v.At(max(n-1, 0)), []float32{float32(math.Inf(1))})
	case "oob":
		if v.Off+n < v.Buf.Len() {
			b.Upload(v.At(n), []float32{1234.5})
		}
	}
}

func (b faultyGPU) LayerNorm(out, x backend.View, w, bias backend.Weight, rows, cols int, eps float32) {
	b.Backend.LayerNorm(out, x, w, bias, rows, cols, eps)
	b.spoil(out, rows*cols)
}

func (b faultyGPU) RMSNorm(out, x backend.View, w backend.Weight, rows, cols int, eps float32) {
	b.Backend.RMSNorm(out, x, w, rows, cols, eps)
	b.spoil(out, rows*cols)
}

func (b faultyGPU) MatMul(y, x backend.View, w, bias backend.Weight, rows, in, out int) {
	b.Backend.MatMul(y, x, w, bias, rows, in, out)
	b.spoil(y, rows*out)
}

func (b faultyGPU) MatMulEpilogue(y, x backend.View, w, bias backend.Weight, rows, in, out int, ep backend.Epilogue) {
	b.Backend.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
	b.spoil(y, rows*out)
}

func (b faultyGPU) Rope2D(x backend.View, stride int, cos, sin backend.View, seq, heads, headDim int) {
	b.Backend.Rope2D(x, stride, cos, sin, seq, heads, headDim)
	b.spoil(x, backend.Strided(seq, stride, heads*headDim))
}

func (b faultyGPU) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	b.Backend.Attention(o, q, k, v, stride, segs, heads, headDim, scale)
	end := 0
	for _, s := range segs {
		end = max(end, s.End)
	}
	b.spoil(o, end*heads*headDim)
}

func (b faultyGPU) GELU(x backend.View, n int, form backend.GELUForm) {
	b.Backend.GELU(x, n, form)
	b.spoil(x, n)
}

func (b faultyGPU) Add(dst, src backend.View, n int) {
	b.Backend.Add(dst, src, n)
	b.spoil(dst, n)
}

func (b faultyGPU) Mul(dst, src backend.View, n int) {
	b.Backend.Mul(dst, src, n)
	b.spoil(dst, n)
}

func (b faultyGPU) FillColumns(x backend.View, rows, stride, c0, c1 int, mean bool) {
	b.Backend.FillColumns(x, rows, stride, c0, c1, mean)
	b.spoil(x, rows*stride)
}
