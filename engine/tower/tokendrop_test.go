package tower_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// dropFixture opens family name's tiny tower and its droptokens fixture.
func dropFixture(t *testing.T, name string) (*fixture, *safetensors.File, intervene.KeepTop) {
	t.Helper()
	fx := openFixture(t, name+"_vision_tiny_f32")
	ref, err := safetensors.Open(filepath.Join("..", "testdata", name+"_vision_tiny_droptokens.safetensors"))
	must(t, err)
	k, err := intervene.ParseKeepTop(ref.Metadata["keep"] + "@" + ref.Metadata["after"])
	must(t, err)
	return fx, ref, k
}

// Token dropping against transformers with the same drop done by hooks (make_fixtures.py
// droptokens: the attention each patch receives in block B from transformers' own q and k in
// float64, the K most received merge units kept, the later blocks' hidden state, rope tables
// and cu_seqlens gathered by forward pre-hooks): the same units kept, the received attention
// within 1e-5 (float32 scores here), every block output (the kept rows after B), the merger
// and deepstack (the dropped tokens 0 rows) within 1e-5, on Qwen3-VL's tiny tower (a deepstack merger on each
// side of the drop) and Qwen2.5-VL's (ranked by a windowed block, windows cut to the kept
// rows afterwards). A dropped row's output stays what it was after B.
func TestTokenDropParity(t *testing.T) {
	for _, name := range []string{"qwen3vl", "qwen25vl"} {
		fx, ref, k := dropFixture(t, name)
		keep := tower.Keep{Outputs: true, Attention: true}
		run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: keep, Set: intervene.Set{KeepTop: k}}, fx.input(t))
		after, rows := run.Dropped()
		units, err := ref.ReadI64("kept_units")
		must(t, err)
		var want []int
		for _, u := range units {
			for j := range 4 {
				want = append(want, int(u)*4+j)
			}
		}
		if after != k.After || !slices.Equal(rows, want) {
			t.Fatalf("%s: kept rows %v after block %d, transformers kept %v after %d", name, rows, after, want, k.After)
		}
		received, err := ref.ReadF32("received") // float64 in transformers, stored as float32
		must(t, err)
		got, err := run.Probes.Received(context.Background(), k.After)
		must(t, err)
		for i, x := range got {
			if w := float64(received[i]); math.Abs(x-w) > 1e-5*max(1, math.Abs(w)) {
				t.Fatalf("%s: row %d receives %v, transformers %v", name, i, x, w)
			}
		}
		D := run.Config().Hidden
		for b, o := range run.Probes.Outputs() {
			w, err := ref.ReadF32(fmt.Sprintf("dropped_blk%d", b))
			must(t, err)
			g := o
			if b > k.After {
				g = gatherTest(o, D, rows)
				if frozen := run.Probes.Outputs()[k.After]; !droppedFrozen(o, frozen, D, rows) {
					t.Errorf("%s block %d: a dropped row's output is not its output after block %d", name, b, k.After)
				}
			}
			if e := relErr(g, w); e > 1e-5 {
				t.Errorf("%s block %d: relative error %.3e > 1e-5 against transformers", name, b, e)
			}
		}
		for out, g := range towerOutputs(run) {
			if strings.HasPrefix(out, "blk") {
				continue
			}
			w, err := ref.ReadF32("dropped_" + out)
			must(t, err)
			if e := relErr(g, w); e > 1e-5 {
				t.Errorf("%s %s: relative error %.3e > 1e-5 against transformers", name, out, e)
			}
		}
	}
}

// gatherTest is x's rows listed in rows ([n, W]).
func gatherTest(x []float32, W int, rows []int) []float32 {
	var out []float32
	for _, r := range rows {
		out = append(out, x[r*W:(r+1)*W]...)
	}
	return out
}

// droppedFrozen says whether every row of o not in kept equals frozen's.
func droppedFrozen(o, frozen []float32, W int, kept []int) bool {
	for r := range len(o) / W {
		if !slices.Contains(kept, r) && !bitEqual(o[r*W:(r+1)*W], frozen[r*W:(r+1)*W]) {
			return false
		}
	}
	return true
}

// Keeping every token changes no bit; a random K is the same K every run, other than the top
// K; the probes leave the dropped rows out after the block (no query attends to them, their
// own rows are refused, the head statistics stay finite).
func TestTokenDropKeepsAndProbes(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	keep := tower.Keep{Outputs: true, Attention: true}
	run := func(spec string) *tower.Run {
		k, err := intervene.ParseKeepTop(spec)
		must(t, err)
		return runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: keep, Set: intervene.Set{KeepTop: k}}, fx.input(t))
	}
	plain, all := run(""), run("44@1")
	for b := range 4 {
		if !bitEqual(all.Probes.Outputs()[b], plain.Probes.Outputs()[b]) {
			t.Errorf("keeping all 44 tokens moved block %d", b)
		}
	}
	if !bitEqual(all.Merger, plain.Merger) {
		t.Error("keeping all 44 tokens moved the merger")
	}
	r1, r2, top := run("random:12@2"), run("random:12@2"), run("12@2")
	_, a := r1.Dropped()
	_, b := r2.Dropped()
	_, c := top.Dropped()
	if len(a) != 48 || !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("random 12 tokens: %d rows, the same twice %v, the top 12's %v", len(a), slices.Equal(a, b), slices.Equal(a, c))
	}
	ctx := context.Background()
	lay := top.Layout
	var dropped int
	for r := range lay.Rows() {
		if !slices.Contains(c, r) {
			dropped = r
			break
		}
	}
	for blk := range 4 {
		_, mean, err := top.Probes.QueryRows(ctx, blk, c[0])
		must(t, err)
		var share float64
		for r, p := range mean {
			if !slices.Contains(c, r) {
				share += float64(p)
			}
		}
		if blk > 2 && share != 0 || blk <= 2 && share == 0 {
			t.Errorf("block %d: the dropped rows hold %v of a kept query's attention", blk, share)
		}
		_, _, err = top.Probes.QueryRows(ctx, blk, dropped)
		if blk > 2 && (err == nil || !strings.Contains(err.Error(), "dropped after block 2")) || blk <= 2 && err != nil {
			t.Errorf("block %d, a dropped query: %v", blk, err)
		}
		dist, ent, err := top.Probes.HeadStats(ctx, blk, 0)
		must(t, err)
		for h := range dist {
			if math.IsNaN(dist[h]) || math.IsNaN(ent[h]) {
				t.Errorf("block %d head %d: distance %v entropy %v", blk, h, dist[h], ent[h])
			}
		}
	}
	roll, err := top.Probes.Rollout(ctx, dropped, 3)
	must(t, err)
	before, err := top.Probes.Rollout(ctx, dropped, 2)
	must(t, err)
	if !bitEqual(roll, before) {
		t.Error("a dropped query's rollout moved in a block that did not run it")
	}
}

// A token drop names itself, refuses what it cannot run naming why, and round-trips.
func TestTokenDropSettings(t *testing.T) {
	for spec, want := range map[string]intervene.KeepTop{"64@3": {K: 64, After: 3}, " random:8 @ 0": {K: 8, Random: true}} {
		k, err := intervene.ParseKeepTop(spec)
		must(t, err)
		if k != want {
			t.Errorf("%q: %+v, want %+v", spec, k, want)
		}
		if again, _ := intervene.ParseKeepTop(k.Spec()); again != k {
			t.Errorf("%q does not round-trip", k.Spec())
		}
	}
	if s := (intervene.KeepTop{K: 64, After: 3}).String(); s != "keep the top 64 tokens after block 3" {
		t.Errorf("name %q", s)
	}
	for _, bad := range []string{"64", "0@1", "x@1", "64@-1", "random:@2"} {
		if _, err := intervene.ParseKeepTop(bad); err == nil || !strings.Contains(err.Error(), "K@BLOCK") {
			t.Errorf("ParseKeepTop(%q): %v", bad, err)
		}
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	for spec, want := range map[string]string{"45@0": "44 merged tokens", "4@4": "blocks 0-3"} {
		k, err := intervene.ParseKeepTop(spec)
		must(t, err)
		if err := startErr(t, fx, tower.Settings{Set: intervene.Set{KeepTop: k}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("keep top %s: %v, want an error naming %s", spec, err, want)
		}
	}
	// a patch of a block after the drop is refused
	k, _ := intervene.ParseKeepTop("10@1")
	e, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{Set: intervene.Set{KeepTop: k}})
	must(t, err)
	defer e.Close()
	r, err := e.Start(fx.input(t))
	must(t, err)
	defer r.Close()
	S, D := r.Layout.Rows(), r.Config().Hidden
	if err := r.PatchOutput(2, []int{0}, make([]float32, S*D)); err == nil || !strings.Contains(err.Error(), "drops tokens after block 1") {
		t.Errorf("patching block 2 after a drop at 1: %v", err)
	}
}

// A key mask and a token drop together: the mask is laid out again over the kept rows, so
// after the drop a kept query gives both the masked and the dropped patches 0, and the
// ranking block already gave the masked ones nothing to receive.
func TestTokenDropWithKeyMask(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	km, err := intervene.ParseKeyMask("rows:56,57,58,59,60,61,62,63@1")
	must(t, err)
	k, err := intervene.ParseKeepTop("30@2")
	must(t, err)
	keep := tower.Keep{Outputs: true, Attention: true, Taps: tower.TapSetOf(tower.TapAttn, tower.TapV)}
	run := runTower(t, fx.dir, cpuBackend(), tower.Settings{Keep: keep, Set: intervene.Set{KeyMask: km, KeepTop: k}}, fx.input(t))
	ctx := context.Background()
	got, err := run.Probes.Received(ctx, 2)
	must(t, err)
	for r := 56; r < 64; r++ {
		if got[run.Layout.RowOfProcessor(r)] != 0 {
			t.Errorf("masked row %d receives %v in block 2", r, got[r])
		}
	}
	_, kept := run.Dropped()
	var q int
	for _, r := range kept {
		if r >= 64 {
			q = r // a kept query of the third image, whose rows 56-63 are masked
			break
		}
	}
	rows, mean, err := run.Probes.QueryRows(ctx, 3, q)
	must(t, err)
	// The graph attended as the probes say: each head's output of q is its row times v (the
	// engine's own attention over the compacted rows against the probes' over the page).
	attn, err := run.Probes.Tap("attn", 3)
	must(t, err)
	v, err := run.Probes.Tap("v", 3)
	must(t, err)
	D, hd := run.Config().Hidden, run.Config().HeadDim()
	for h, row := range rows {
		for d := range hd {
			var want float64
			for j, p := range row {
				want += float64(p) * float64(v[j*D+h*hd+d])
			}
			if got := float64(attn[q*D+h*hd+d]); math.Abs(got-want) > 1e-5*max(1, math.Abs(want)) {
				t.Fatalf("block 3 head %d dim %d: the engine's attention gives %v, the probes' row times v %v", h, d, got, want)
			}
		}
	}
	var sum float64
	for r, p := range mean {
		sum += float64(p)
		if (r >= 56 && r < 64 || !slices.Contains(kept, r)) && p != 0 {
			t.Errorf("block 3: query %d gives row %d (masked or dropped) %v", q, r, p)
		}
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Errorf("block 3: query %d's row sums to %v", q, sum)
	}
}

// A key mask that masks every row a drop kept in some image is refused when the drop happens,
// saying that its rows are the kept rows' numbers.
func TestTokenDropMaskLeavesNoKey(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	k, err := intervene.ParseKeepTop("random:1@0")
	must(t, err)
	one := runTower(t, fx.dir, cpuBackend(), tower.Settings{Set: intervene.Set{KeepTop: k}}, fx.input(t))
	u := int(one.KeptUnits()[0])
	km, err := intervene.ParseKeyMask(fmt.Sprintf("rows:%d,%d,%d,%d@1", 4*u, 4*u+1, 4*u+2, 4*u+3))
	must(t, err)
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	e, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{Set: intervene.Set{KeepTop: k, KeyMask: km}})
	must(t, err)
	defer e.Close()
	r, err := e.Start(fx.input(t))
	must(t, err)
	defer r.Close()
	err = r.RunAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "after the token drop (4 rows kept") {
		t.Errorf("masking the one kept token's rows: %v", err)
	}
}

// Localizing a non-finite value replays a block and puts the run's state back: after a token
// drop that state is the kept rows, gathered (not the page's first rows), so the run goes on
// to the same bits as without the replay.
func TestTokenDropReplayKeepsState(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	k, err := intervene.ParseKeepTop("12@1")
	must(t, err)
	set := tower.Settings{Keep: tower.Keep{Outputs: true}, Set: intervene.Set{KeepTop: k}}
	plain := runTower(t, fx.dir, cpuBackend(), set, fx.input(t))
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	e, err := tower.NewEngine(ck, cpuBackend(), set)
	must(t, err)
	defer e.Close()
	r, err := e.Start(fx.input(t))
	must(t, err)
	defer r.Close()
	for range 3 {
		_, err := r.Step(context.Background())
		must(t, err)
	}
	in := r.Probes.Outputs()[1]
	must(t, tower.ReplayBlock(r, 2, in))
	_, kept := r.Dropped()
	D := r.Config().Hidden
	if !bitEqual(tower.HiddenRows(r), gatherTest(r.Hidden(), D, kept)) {
		t.Fatal("after the replay the graph's hidden state is not the kept rows of block 2's output")
	}
	must(t, r.RunAll(context.Background()))
	if !bitEqual(r.Merger, plain.Merger) {
		t.Error("a replay of block 2 changed the merger")
	}
}

// The probes of earlier blocks may run while the run drops tokens (the window draws block 0's
// maps while the run goes on): the drop reaches them under the store's lock. Run with -race to
// see it (go test -race -run TestTokenDropWhileProbing ./engine/).
func TestTokenDropWhileProbing(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	k, err := intervene.ParseKeepTop("12@1")
	must(t, err)
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	e, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{Keep: tower.Keep{Attention: true}, Set: intervene.Set{KeepTop: k}})
	must(t, err)
	defer e.Close()
	r, err := e.Start(fx.input(t))
	must(t, err)
	defer r.Close()
	ctx := context.Background()
	_, err = r.Step(ctx)
	must(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for q := range 400 {
			if _, _, err := r.Probes.QueryRows(ctx, 0, q%176); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	must(t, r.RunAll(ctx))
	<-done
}
