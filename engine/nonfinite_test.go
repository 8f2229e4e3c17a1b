package engine_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/synth"
)

// tinyWith writes the tiny preset with one value of one tensor replaced.
func tinyWith(t *testing.T, tensor string, at int, value float32) string {
	t.Helper()
	cfg, err := synth.Preset("tiny")
	must(t, err)
	dir := t.TempDir()
	must(t, synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 3, Fill: func(name string, shape []int) []float32 {
		if name != tensor {
			return nil
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = 0.01 * float32(i%7-3)
		}
		vals[at] = value
		return vals
	}}))
	return dir
}

func runTiny(t *testing.T, dir string) *engine.Session {
	t.Helper()
	ck, err := engine.OpenCheckpoint(dir)
	must(t, err)
	in := &engine.Input{Grids: []geom.Grid{{T: 1, H: 4, W: 6}}}
	in.Pixels = make([]float32, in.Grids[0].Patches()*ck.Config.PatchDim())
	for i := range in.Pixels {
		in.Pixels[i] = float32(math.Sin(float64(i)))
	}
	sess, err := engine.NewSession(context.Background(), ck, in, dir, "", engine.Settings{Residency: engine.Pread}, cpuBackend())
	must(t, err)
	t.Cleanup(func() { sess.Close() })
	must(t, sess.RunAll(context.Background()))
	return sess
}

// A NaN weight is named with its block and op, and the report stays valid JSON.
func TestNonFiniteNamed(t *testing.T) {
	for _, c := range []struct {
		tensor     string
		block      int
		op, weight string
	}{
		{"blocks.2.mlp.linear_fc1.weight", 2, "fc1", "blocks.2.mlp.linear_fc1.weight"},
		{"blocks.1.attn.qkv.bias", 1, "qkv", "blocks.1.attn.qkv.bias"},
		{"blocks.0.norm1.weight", 0, "LayerNorm1", "blocks.0.norm1.weight"},
		{"patch_embed.proj.weight", -1, "embedding", "patch_embed.proj.weight"},
	} {
		sess := runTiny(t, tinyWith(t, c.tensor, 5, float32(math.NaN())))
		nf := sess.Run.NonFinite
		if nf == nil || nf.Block != c.block || !strings.Contains(nf.Op, c.op) || len(nf.Weights) != 1 || !strings.HasSuffix(nf.Weights[0], c.weight) {
			t.Errorf("NaN in %s: %+v", c.tensor, nf)
			continue
		}
		b, err := json.Marshal(sess.Report)
		if err != nil || !strings.Contains(string(b), `"non_finite"`) || !strings.Contains(string(b), `"mean_change":null`) {
			t.Errorf("NaN in %s: the JSON report %v: %.200s", c.tensor, err, b)
		}
		t.Logf("%s: %s", c.tensor, nf)
	}
	if sess := runTiny(t, tinyWith(t, "blocks.2.mlp.linear_fc1.weight", 5, 0.5)); sess.Run.NonFinite != nil {
		t.Errorf("a finite model reported %v", sess.Run.NonFinite)
	}
}

// A NaN weight of the final merger or of a deepstack merger (whose outputs no block reads)
// is named with the merger, in the report's JSON too.
func TestNonFiniteMergerNamed(t *testing.T) {
	for _, c := range []struct {
		tensor, merger, says string
		after                int
	}{
		{"merger.linear_fc2.weight", "merger.", "the final merger", 3},
		{"deepstack_merger_list.1.linear_fc1.bias", "deepstack_merger_list.1.", "deepstack merger deepstack_merger_list.1 (after block 2)", 2},
	} {
		sess := runTiny(t, tinyWith(t, c.tensor, 1, float32(math.Inf(1))))
		nf := sess.Run.NonFinite
		if nf == nil || nf.Merger != c.merger || nf.Block != c.after || len(nf.Weights) != 1 || !strings.HasSuffix(nf.Weights[0], c.tensor) ||
			!strings.Contains(nf.String(), c.says) {
			t.Errorf("Inf in %s: %+v (%v)", c.tensor, nf, nf)
			continue
		}
		if b, _ := json.Marshal(sess.Report); !strings.Contains(string(b), `"merger":"`+c.merger+`"`) {
			t.Errorf("Inf in %s: the JSON report: %.300s", c.tensor, b)
		}
		t.Logf("%s: %s", c.tensor, nf)
	}
}
