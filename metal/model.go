package metal

// model.go: the Metal backend over a modelled GPU, on every platform. The engine runs its real
// graph on it — the same dispatches, MLP tiles, attention splits and command buffers as on a
// Mac — but nothing executes: each pass takes the time shaders' performance model gives its
// dispatches on a named GPU, and every dispatch is logged with its cost. `inspector gpumodel`
// prints these per block and per kernel; on a Mac it runs the same engine on the GPU beside it.
//
// Invariant: a model pass's time is the sum of its dispatches' estimates plus one commit,
// exactly what Backend.Commit reports for it, so the engine's block timings are the model's.
// Mutation that would silently break it: estimating at commit from the last dispatch only
// (or dropping the cut passes' times) — a block would look as fast as its last kernel.

import (
	"os"
	"time"

	"github.com/turbospark/inspector/shaders"
)

// ModelRecord is one dispatch a logging backend was given.
type ModelRecord struct {
	Kernel   string
	Threads  int // threads per threadgroup it is dispatched with
	Cost     shaders.Cost
	Estimate shaders.Estimate // on the log's GPU
	Pass     int              // the command buffer it was encoded in, counted from 0
	Measured time.Duration    // a profiling backend: the GPU time of its own command buffer
}

// ModelLog is what a logging backend (NewModel, NewProfiled) saw, in order.
type ModelLog struct {
	GPU     shaders.GPU // the model's GPU for the estimates
	Records []ModelRecord
	Passes  int  // command buffers committed with work in them
	measure bool // one dispatch per command buffer, its GPU time kept
}

// add logs a dispatch about to be encoded.
func (l *ModelLog) add(d shaders.Dispatch) {
	l.Records = append(l.Records, ModelRecord{Kernel: d.Kernel, Threads: d.Threads[0] * d.Threads[1] * d.Threads[2],
		Cost: d.Cost, Estimate: l.GPU.Estimate(d.Cost), Pass: l.Passes})
}

// committed notes a command buffer's GPU time: a profiling log gives it to its one dispatch.
func (l *ModelLog) committed(d time.Duration) {
	if l.measure && len(l.Records) > 0 {
		l.Records[len(l.Records)-1].Measured = d
	}
	l.Passes++
}

// Mark returns the position of the next record: Records[Mark():] are what comes after.
func (l *ModelLog) Mark() int { return len(l.Records) }

type modelBuf struct{ n int }

type modelGPU struct {
	gpu     shaders.GPU
	pending time.Duration
	open    bool
}

// NewModel returns a Metal backend whose passes take the modelled time on g, and the log of
// every dispatch it is given.
func NewModel(g shaders.GPU) (*Backend, *ModelLog) {
	b := newBackend(&modelGPU{gpu: g}, os.Getpagesize())
	b.log = &ModelLog{GPU: g}
	return b, b.log
}

// profile makes b log every dispatch with its estimate on g and its own GPU time: each
// dispatch is then its own command buffer (budget 0), so the times are the kernels' alone.
func (b *Backend) profile(g shaders.GPU) *ModelLog {
	b.log = &ModelLog{GPU: g, measure: true}
	b.budget = 0
	return b.log
}

func (m *modelGPU) name() string { return "model of " + m.gpu.Name }

func (m *modelGPU) newBuffer(n int) (devBuffer, []byte, error) {
	return &modelBuf{n}, make([]byte, n), nil
}

func (m *modelGPU) wrap(mem []byte, page int) (devBuffer, error) { return &modelBuf{len(mem)}, nil }

func (m *modelGPU) release(devBuffer) {}

func (m *modelGPU) supports(string) bool { return true }

func (m *modelGPU) encode(d shaders.Dispatch) {
	m.pending += m.gpu.Estimate(d.Cost).Time
	m.open = true
}

func (m *modelGPU) commit() (time.Duration, error) {
	if !m.open {
		return 0, nil
	}
	t := m.pending + shaders.CommitCost
	m.pending, m.open = 0, false
	return t, nil
}

func (m *modelGPU) close() {}
