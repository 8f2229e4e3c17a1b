package engine

// trace.go: a finished run's timeline as Chrome trace-event JSON (the "JSON Array/Object
// Format" that Perfetto and chrome://tracing open): one track for the weight reads, one per
// half (attention, MLP), one for the deepstack mergers, each block a complete ("X") event.
//
// Invariant: an event's duration is the work's own time (the pass time the backend
// reported), placed at the host time its pass began. Mutation that would silently break it:
// using a block's wall time as the attention event's duration — the track would look full,
// and the MLP track would overlap it.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
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
	trackWeights = iota + 1
	trackAttention
	trackMLP
	trackDeepstack
)

// WriteTrace writes the report's blocks as a trace-event file.
func (r *Report) WriteTrace(w io.Writer) error {
	meta := func(tid int, name string) traceEvent {
		return traceEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": name}}
	}
	events := []traceEvent{
		{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": fmt.Sprintf("%s on %s", r.Settings.ModelType, r.Settings.Backend)}},
		meta(trackWeights, "weights (wait)"), meta(trackAttention, "attention half"), meta(trackMLP, "MLP half"), meta(trackDeepstack, "deepstack merger"),
	}
	us := func(ms float64) float64 { return math.Round(ms * 1000) } // the report keeps whole µs: no 0.999… from the float round trip
	for _, b := range r.Blocks {
		args := map[string]any{"block": b.Block}
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
}
