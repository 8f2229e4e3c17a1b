package tower_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/tower"
	"github.com/turbospark/inspector/internal/testfixture"
)

// stepped is what a run gave block by block: each output (a copy, and where it lay) and
// the statistics, then the merger's output.
type stepped struct {
	outs   [][]float32
	at     []*float32
	stats  []any
	merger []float32
	run    *tower.Run
}

func stepAll(t *testing.T, dir string, s tower.Settings, in *ckpt.Input) stepped {
	t.Helper()
	e := testfixture.Engine(t, dir, cpuBackend(), s)
	run, err := e.Start(in)
	must(t, err)
	t.Cleanup(run.Close)
	var got stepped
	for run.Next() < run.Config().Depth {
		res, err := run.Step(context.Background())
		must(t, err)
		out := tower.BlockOutput(run)
		got.outs = append(got.outs, slices.Clone(out))
		got.at = append(got.at, unsafe.SliceData(out))
		got.stats = append(got.stats, res.Stats)
	}
	_, err = run.Finish(context.Background())
	must(t, err)
	got.merger, got.run = run.Merger, run
	return got
}

// A run that keeps no block output writes each into the memory of one nothing reads any
// more (two blocks back), and computes exactly what a run keeping them all does: the same
// outputs, statistics and merger, bit for bit, with and without a token drop (whose frozen
// rows are read for the rest of the run). A kept output is never written again: each stays
// what its block gave.
func TestRunReusesOnlyTheOutputsNoOneReads(t *testing.T) {
	fx, _, drop := dropFixture(t, "qwen3vl")
	for _, k := range []intervene.KeepTop{{}, drop} {
		name := k.Spec()
		mine := stepAll(t, fx.dir, tower.Settings{Set: intervene.Set{KeepTop: k}}, fx.input(t))
		kept := stepAll(t, fx.dir, tower.Settings{Keep: tower.Keep{Outputs: true}, Set: intervene.Set{KeepTop: k}}, fx.input(t))
		for i := range kept.outs {
			if !bitEqual(mine.outs[i], kept.outs[i]) || !reflect.DeepEqual(mine.stats[i], kept.stats[i]) {
				t.Fatalf("%q: block %d's output or statistics differ between a run that keeps no output and one that keeps all", name, i)
			}
			stored, err := kept.run.Probes.Output(i)
			must(t, err)
			if !bitEqual(stored, kept.outs[i]) {
				t.Fatalf("%q: the kept output of block %d changed after its block", name, i)
			}
		}
		if !bitEqual(mine.merger, kept.merger) {
			t.Fatalf("%q: the merger's output differs", name)
		}
		if k.None() {
			for i := 2; i < len(mine.at); i++ {
				if mine.at[i] != mine.at[i-2] {
					t.Errorf("block %d's output is in fresh memory; want block %d's, which nothing reads any more", i, i-2)
				}
			}
		}
	}
}

// The hidden state a caller takes (Hidden: a patch's source) stays what it was while the
// run goes on, though the run keeps no output.
func TestHiddenIsTheCallersToKeep(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	run, err := testfixture.Engine(t, fx.dir, cpuBackend(), tower.Settings{}).Start(fx.input(t))
	must(t, err)
	defer run.Close()
	ctx := context.Background()
	for range 2 {
		_, err := run.Step(ctx)
		must(t, err)
	}
	h := run.Hidden()
	want := slices.Clone(h)
	for run.Next() < run.Config().Depth {
		_, err := run.Step(ctx)
		must(t, err)
	}
	if !bitEqual(h, want) {
		t.Error("the hidden state taken after block 1 changed as later blocks ran")
	}
}
