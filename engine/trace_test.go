package engine_test

import (
	"bytes"
	"context"
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
	sess, err := engine.NewSession(context.Background(), ck, fx.input(t), fx.dir, "", engine.Settings{Residency: engine.Pread}, cpuBackend())
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
	// The whole run is covered: the blocks' wall events sum to the blocks' total, and the
	// embedding and the merger have theirs, before the first block and after the last.
	var walls float64
	for _, b := range sess.Report.Blocks {
		e := tr.TraceEvents[byName["block "+itoa(b.Block)]]
		walls += e.Dur
		if e.Ts != math.Round(b.AtMS*1000) {
			t.Errorf("block %d's wall event at %.0f µs, the block began at %.3f ms", b.Block, e.Ts, b.AtMS)
		}
	}
	em, ok1 := byName["embedding"]
	mg, ok2 := byName["merger"]
	if !ok1 || !ok2 || tr.TraceEvents[em].Dur != math.Round(sess.Report.EmbedMS*1000) || tr.TraceEvents[mg].Dur != math.Round(sess.Report.MergerMS*1000) {
		t.Fatalf("embedding / merger events missing or of the wrong length")
	}
	covered := walls + tr.TraceEvents[em].Dur + tr.TraceEvents[mg].Dur
	if want := math.Round(sess.Report.Totals.WallMS * 1000); math.Abs(covered-want) > float64(depth+2) {
		t.Errorf("the blocks', the embedding's and the merger's events sum to %.0f µs, the run took %.0f", covered, want)
	}
	first, last := sess.Report.Blocks[0], sess.Report.Blocks[depth-1]
	if tr.TraceEvents[em].Ts > math.Round(first.AtMS*1000) || tr.TraceEvents[mg].Ts < math.Round((last.AtMS+last.WallMS)*1000)-1 {
		t.Errorf("the embedding at %.0f µs, the merger at %.0f: not before the first block (%.3f ms) and after the last (ends %.3f ms)",
			tr.TraceEvents[em].Ts, tr.TraceEvents[mg].Ts, first.AtMS, last.AtMS+last.WallMS)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }
