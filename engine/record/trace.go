package record

// trace.go: a finished run's timeline as Chrome trace-event JSON (the "JSON Array/Object
// Format" that Perfetto and chrome://tracing open): a track with each block's whole wall time
// (halves, weight wait, deepstack and the host work between them: its args say how much was
// host work), one for the weight reads, one per half (attention, MLP), one for the deepstack
// mergers, and one for the embedding and the merger; each a complete ("X") event. The block
// and embed/merger tracks together cover the whole run.
//
// Invariant: an event's duration is the work's own time (the pass time the backend
// reported), placed at the host time its pass began. Mutation that would silently break it:
// using a block's wall time as the attention event's duration — the track would look full,
// and the MLP track would overlap it.

import (
	"fmt"
	"io"
	"math"

	"github.com/turbospark/inspector/internal/jsonx"
)

type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`  // µs
	Dur  float64        `json:"dur"` // µs
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// Trace tracks.
const (
	trackBlocks = iota + 1
	trackWeights
	trackAttention
	trackMLP
	trackDeepstack
	trackEnds
)

// WriteTrace writes the report's blocks as a trace-event file.
func (r *Report) WriteTrace(w io.Writer) error {
	meta := func(tid int, name string) traceEvent {
		return traceEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": name}}
	}
	events := []traceEvent{
		{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": fmt.Sprintf("%s on %s", r.Settings.ModelType, r.Settings.Backend)}},
		meta(trackBlocks, "blocks (wall)"), meta(trackWeights, "weights (wait)"), meta(trackAttention, "attention half"), meta(trackMLP, "MLP half"),
		meta(trackDeepstack, "deepstack merger"), meta(trackEnds, "embedding and merger"),
	}
	us := func(ms float64) float64 { return math.Round(ms * 1000) } // the report keeps whole µs: no 0.999… from the float round trip
	events = append(events, traceEvent{Name: "embedding", Ph: "X", Ts: us(r.EmbedAt), Dur: us(r.EmbedMS), Pid: 1, Tid: trackEnds})
	if r.MergerMS > 0 {
		events = append(events, traceEvent{Name: "merger", Ph: "X", Ts: us(r.MergerAt), Dur: us(r.MergerMS), Pid: 1, Tid: trackEnds})
	}
	for _, b := range r.Blocks {
		args := map[string]any{"block": b.Block}
		host := max(0, b.WallMS-b.WaitMS-b.AttentionMS-b.MLPMS-b.DeepstackMS)
		events = append(events, traceEvent{Name: fmt.Sprintf("block %d", b.Block), Ph: "X", Ts: us(b.AtMS), Dur: us(b.WallMS), Pid: 1, Tid: trackBlocks,
			Args: map[string]any{"block": b.Block, "host_work_ms": math.Round(host*1000) / 1000}})
		if b.WaitMS > 0 || b.BytesRead > 0 {
			events = append(events, traceEvent{Name: fmt.Sprintf("block %d weights", b.Block), Ph: "X", Ts: us(b.AtMS), Dur: us(b.WaitMS),
				Pid: 1, Tid: trackWeights, Args: map[string]any{"block": b.Block, "bytes_read": b.BytesRead}})
		}
		events = append(events,
			traceEvent{Name: fmt.Sprintf("block %d attention", b.Block), Ph: "X", Ts: us(b.AttentionAtMS), Dur: us(b.AttentionMS), Pid: 1, Tid: trackAttention, Args: args},
			traceEvent{Name: fmt.Sprintf("block %d MLP", b.Block), Ph: "X", Ts: us(b.MLPAtMS), Dur: us(b.MLPMS), Pid: 1, Tid: trackMLP, Args: args})
		if b.DeepstackMS > 0 {
			events = append(events, traceEvent{Name: fmt.Sprintf("block %d deepstack", b.Block), Ph: "X", Ts: us(b.DeepstackAtMS), Dur: us(b.DeepstackMS),
				Pid: 1, Tid: trackDeepstack, Args: args})
		}
	}
	return jsonx.Encode(w, map[string]any{"traceEvents": events, "displayTimeUnit": "ms"}, " ")
}
