package engine_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/turbospark/inspector/engine"
)

// The trace has one complete event per block and half, each as long as the half's own
// time and starting when its pass began, on its own track; the MLP of a block starts after
// its attention ends.
func TestTrace(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	sess, err := engine.NewSession(ck, fx.input(t), fx.dir, "", engine.Settings{Residency: engine.Pread}, cpuBackend())
	must(t, err)
	defer sess.Close()
	must(t, sess.RunAll(t.Context()))
	var buf bytes.Buffer
	must(t, sess.Report.WriteTrace(&buf))
	var tr struct {
		TraceEvents []struct {
			Name, Ph string
			Ts, Dur  float64
			Tid      int
		}
	}
	must(t, json.Unmarshal(buf.Bytes(), &tr))
	byName := map[string]int{}
	for i, e := range tr.TraceEvents {
		byName[e.Name] = i
	}
	depth := ck.Config.Depth
	for _, b := range sess.Report.Blocks {
		att, ok1 := byName["block "+itoa(b.Block)+" attention"]
		mlp, ok2 := byName["block "+itoa(b.Block)+" MLP"]
		if !ok1 || !ok2 {
			t.Fatalf("block %d: events missing from %d events", b.Block, len(tr.TraceEvents))
		}
		a, m := tr.TraceEvents[att], tr.TraceEvents[mlp]
		if a.Ph != "X" || a.Dur != math.Round(b.AttentionMS*1000) || m.Dur != math.Round(b.MLPMS*1000) || a.Tid == m.Tid {
			t.Errorf("block %d: attention %+v, MLP %+v; report %.3f / %.3f ms", b.Block, a, m, b.AttentionMS, b.MLPMS)
		}
		if m.Ts < a.Ts+a.Dur {
			t.Errorf("block %d: the MLP begins at %.0f µs, before the attention ends at %.0f", b.Block, m.Ts, a.Ts+a.Dur)
		}
	}
	if len(sess.Report.Blocks) != depth {
		t.Fatalf("%d blocks", len(sess.Report.Blocks))
	}
	if _, ok := byName["block 1 deepstack"]; !ok {
		t.Error("no deepstack event for block 1 (a deepstack tap of the fixture)")
	}
}

func itoa(n int) string { return string(rune('0' + n)) }
