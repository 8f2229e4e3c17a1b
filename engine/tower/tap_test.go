package tower_test

// tap_test.go: every tap a run keeps is the value the graph computes at that point: each is
// recomputed from the tap before it with the CPU backend's own ops (bit for bit), ffn_act
// does not depend on the MLP tile, and the dump writes the taps asked for.
//
// Invariant: every expected value is computed from the run's previous tap (or the block
// input), never from the tap under test; the mutation that would silently break it:
// recomputing a tap from itself, which passes whatever the run kept.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/tower"
)

// hostOps runs the CPU backend's ops on host slices.
type hostOps struct {
	t  testing.TB
	be backend.Backend
}

func newHostOps(t testing.TB) hostOps {
	be := cpuBackend()
	t.Cleanup(func() { be.Close() })
	return hostOps{t, be}
}

// up is a backend buffer holding a copy of x (or n zeros when x is nil).
func (o hostOps) up(x []float32, n int) backend.View {
	b, err := o.be.Alloc(max(n, len(x)))
	must(o.t, err)
	if x != nil {
		o.be.Upload(backend.View{Buf: b}, x)
	}
	return backend.View{Buf: b}
}

func (o hostOps) down(v backend.View, n int) []float32 {
	out := make([]float32, n)
	o.be.Download(out, v)
	return out
}

func (o hostOps) layerNorm(x []float32, w, b backend.Weight, rows, cols int) []float32 {
	y := o.up(nil, rows*cols)
	o.be.LayerNorm(y, o.up(x, 0), w, b, rows, cols, 1e-6)
	return o.down(y, rows*cols)
}

func (o hostOps) matMul(x []float32, w, b backend.Weight, rows, in, out int) []float32 {
	y := o.up(nil, rows*out)
	o.be.MatMul(y, o.up(x, 0), w, b, rows, in, out)
	return o.down(y, rows*out)
}

func (o hostOps) add(a, b []float32) []float32 {
	y := o.up(a, 0)
	o.be.Add(y, o.up(b, 0), len(a))
	return o.down(y, len(a))
}

func (o hostOps) geluTanh(x []float32) []float32 {
	y := o.up(x, 0)
	o.be.GELU(y, len(x), backend.GELUTanh)
	return o.down(y, len(x))
}

// tapBlock is what the checks need of one block of a run.
type tapBlock struct {
	cfg  model.Config
	lay  *geom.Layout
	segs []backend.Segment
	cos  []float32
	sin  []float32
	w    func(suffix string) backend.Weight
}

// tapChainErrors recomputes each tap of one block from the previous one (in: the block's
// input) and names those that differ by a bit.
func tapChainErrors(o hostOps, b tapBlock, in []float32, taps map[string][]float32) []string {
	S, D, I, H := b.lay.Rows(), b.cfg.Hidden, b.cfg.Intermediate, b.cfg.Heads
	hd := D / H
	qkv := o.matMul(taps["ln1"], b.w("attn.qkv.weight"), b.w("attn.qkv.bias"), S, D, 3*D)
	roped := o.up(qkv, 0)
	o.be.Rope2D(roped, 3*D, o.up(b.cos, 0), o.up(b.sin, 0), S, H, hd)
	o.be.Rope2D(roped.At(D), 3*D, o.up(b.cos, 0), o.up(b.sin, 0), S, H, hd)
	qkvRoped := o.down(roped, S*3*D)
	third := func(x []float32, k int) []float32 {
		out := make([]float32, 0, S*D)
		for s := range S {
			out = append(out, x[s*3*D+k*D:][:D]...)
		}
		return out
	}
	joined := make([]float32, 0, S*3*D) // the run's own q, k, v as one qkv
	for s := range S {
		for _, name := range []string{"q", "k", "v"} {
			joined = append(joined, taps[name][s*D:(s+1)*D]...)
		}
	}
	attn := o.up(nil, S*D)
	jv := o.up(joined, 0)
	o.be.Attention(attn, jv, jv.At(D), jv.At(2*D), 3*D, b.segs, H, hd, float32(1/math.Sqrt(float64(hd))))
	act := o.geluTanh(o.matMul(taps["ln2"], b.w("mlp.linear_fc1.weight"), b.w("mlp.linear_fc1.bias"), S, D, I))
	want := map[string][]float32{
		"ln1":       o.layerNorm(in, b.w("norm1.weight"), b.w("norm1.bias"), S, D),
		"q":         third(qkvRoped, 0),
		"k":         third(qkvRoped, 1),
		"v":         third(qkv, 2),
		"attn":      o.down(attn, S*D),
		"attn_proj": o.matMul(taps["attn"], b.w("attn.proj.weight"), b.w("attn.proj.bias"), S, D, D),
		"ffn_in":    o.add(in, taps["attn_proj"]),
		"ln2":       o.layerNorm(taps["ffn_in"], b.w("norm2.weight"), b.w("norm2.bias"), S, D),
		"ffn_act":   act,
		"ffn_out":   o.matMul(taps["ffn_act"], b.w("mlp.linear_fc2.weight"), b.w("mlp.linear_fc2.bias"), S, I, D),
		"out":       o.add(taps["ffn_in"], taps["ffn_out"]),
	}
	var bad []string
	for _, name := range tower.TapNames() {
		if !bitEqual(taps[name], want[name]) {
			bad = append(bad, name)
		}
	}
	return bad
}

// tapsOf is every kept tap of block i of run.
func tapsOf(t testing.TB, run *tower.Run, i int) map[string][]float32 {
	t.Helper()
	taps := map[string][]float32{}
	for _, name := range tower.TapNames() {
		x, err := run.Probes.Tap(name, i)
		must(t, err)
		taps[name] = x
	}
	return taps
}

// allTapsRun runs the tiny tower keeping every tap, with weights mapped (so the test can
// read them by name) and an MLP tile that splits the page unevenly.
func allTapsRun(t *testing.T, tile int) (*tower.Run, *tower.Engine, *fixture) {
	t.Helper()
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	eng, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{TileRows: tile, Keep: tower.Keep{Taps: tower.AllTaps}})
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	run, err := eng.Start(fx.input(t))
	must(t, err)
	t.Cleanup(run.Close)
	must(t, run.RunAll(t.Context()))
	return run, eng, fx
}

func blockOf(run *tower.Run, eng *tower.Engine, i int) tapBlock {
	cfg := run.Config()
	cos, sin := run.Layout.RopeTables(cfg.HeadDim(), cfg.RopeTheta)
	return tapBlock{cfg: cfg, lay: run.Layout, segs: run.Layout.Segments, cos: cos, sin: sin,
		w: func(suffix string) backend.Weight { return eng.Res.Global(fmt.Sprintf("blocks.%d.%s", i, suffix)) }}
}

// Every tap of every block is what the CPU backend's ops make of the tap before it, with
// the widths of tap.go; out is also the fixture's transformers output.
func TestTapsFollowTheGraph(t *testing.T) {
	run, eng, fx := allTapsRun(t, 50)
	o := newHostOps(t)
	cfg, S := run.Config(), run.Layout.Rows()
	if got, want := run.Probes.Taps(), tower.TapNames(); !slices.Equal(got, want) {
		t.Fatalf("the store lists %v, want every tap in graph order %v", got, want)
	}
	in := run.Embed
	for i := range cfg.Depth {
		taps := tapsOf(t, run, i)
		for _, tp := range tower.Taps() {
			if got, want := len(taps[tp.String()]), S*tp.Width(cfg); got != want {
				t.Fatalf("block %d tap %s: %d values, want %d", i, tp, got, want)
			}
		}
		if bad := tapChainErrors(o, blockOf(run, eng, i), in, taps); len(bad) > 0 {
			t.Errorf("block %d: taps %v are not what the graph computes there", i, bad)
		}
		if e := relErr(taps["out"], fx.f32(t, fmt.Sprintf("blk%d", i))); e > 1e-5 {
			t.Errorf("block %d out: rel %.2e against transformers", i, e)
		}
		qk, err := run.Probes.QK(i)
		must(t, err)
		for s := range S {
			D := cfg.Hidden
			if !bitEqual(qk[s*2*D:s*2*D+D], taps["q"][s*D:(s+1)*D]) || !bitEqual(qk[s*2*D+D:(s+1)*2*D], taps["k"][s*D:(s+1)*D]) {
				t.Fatalf("block %d row %d: the taps q and k are not the kept q|k", i, s)
			}
		}
		in = taps["out"]
	}
}

// The check above can fail: each way a tap could be read at the wrong place (doctored into
// the real taps of block 1, a deepstack block) is named by tapChainErrors.
func TestTapChainSeesMisplacedTaps(t *testing.T) {
	run, eng, _ := allTapsRun(t, 50)
	o := newHostOps(t)
	prev, err := run.Probes.Tap("out", 0)
	must(t, err)
	ds := run.Deepstack[0] // [S/4, O]: what a tap read after the deepstack merger might see
	cases := []struct {
		name   string
		broken func(taps map[string][]float32)
		caught string
	}{
		{"ln1 read before the LayerNorm (buf.h)", func(m map[string][]float32) { m["ln1"] = prev }, "ln1"},
		{"q read before rope", func(m map[string][]float32) { m["q"] = unroped(o, run, eng, m, "q") }, "q"},
		{"v read from k's columns", func(m map[string][]float32) { m["v"] = m["k"] }, "v"},
		{"attn_proj read from buf.attn", func(m map[string][]float32) { m["attn_proj"] = m["attn"] }, "attn_proj"},
		{"ffn_in read after the MLP", func(m map[string][]float32) { m["ffn_in"] = m["out"] }, "ffn_in"},
		{"ln2 read after the deepstack merger", func(m map[string][]float32) { m["ln2"] = overwriteHead(m["ln2"], ds) }, "ln2"},
		{"ffn_act read before GELU", func(m map[string][]float32) { m["ffn_act"] = fc1Only(o, run, eng, m) }, "ffn_act"},
		{"ffn_act of the last tile only", func(m map[string][]float32) { m["ffn_act"] = lastTileOnly(m["ffn_act"], run.Config().Intermediate, 50) }, "ffn_act"},
		{"ffn_out read after the residual", func(m map[string][]float32) { m["ffn_out"] = m["out"] }, "ffn_out"},
	}
	for _, c := range cases {
		taps := tapsOf(t, run, 1)
		c.broken(taps)
		bad := tapChainErrors(o, blockOf(run, eng, 1), prev, taps)
		if !slices.Contains(bad, c.caught) {
			t.Errorf("%s: the check names %v, not %s", c.name, bad, c.caught)
		}
	}
	if bad := tapChainErrors(o, blockOf(run, eng, 1), prev, tapsOf(t, run, 1)); len(bad) > 0 {
		t.Errorf("the undoctored taps fail: %v", bad)
	}
}

// unroped is q (or k) as qkv's matmul leaves it, before rope.
func unroped(o hostOps, run *tower.Run, eng *tower.Engine, m map[string][]float32, name string) []float32 {
	b := blockOf(run, eng, 1)
	S, D := run.Layout.Rows(), run.Config().Hidden
	qkv := o.matMul(m["ln1"], b.w("attn.qkv.weight"), b.w("attn.qkv.bias"), S, D, 3*D)
	off := map[string]int{"q": 0, "k": D}[name]
	out := make([]float32, 0, S*D)
	for s := range S {
		out = append(out, qkv[s*3*D+off:][:D]...)
	}
	return out
}

func fc1Only(o hostOps, run *tower.Run, eng *tower.Engine, m map[string][]float32) []float32 {
	b, cfg := blockOf(run, eng, 1), run.Config()
	return o.matMul(m["ln2"], b.w("mlp.linear_fc1.weight"), b.w("mlp.linear_fc1.bias"), run.Layout.Rows(), cfg.Hidden, cfg.Intermediate)
}

// overwriteHead is x with its first values replaced by y's (a buffer partly rewritten).
func overwriteHead(x, y []float32) []float32 {
	out := slices.Clone(x)
	copy(out, y)
	return out
}

// lastTileOnly is what a tile buffer holds after the last tile: every earlier row zero.
func lastTileOnly(x []float32, width, tile int) []float32 {
	S := len(x) / width
	out := make([]float32, len(x))
	last := (S - 1) / tile * tile
	copy(out[last*width:], x[last*width:])
	return out
}

// ffn_act is read tile by tile; it does not depend on the tile size, nor does any other tap.
func TestFFNActTileIndependent(t *testing.T) {
	one, _, _ := allTapsRun(t, 1)
	whole, _, _ := allTapsRun(t, 512)
	for i := range one.Config().Depth {
		for _, name := range tower.TapNames() {
			a, err := one.Probes.Tap(name, i)
			must(t, err)
			b, err := whole.Probes.Tap(name, i)
			must(t, err)
			if !bitEqual(a, b) {
				t.Errorf("block %d tap %s: tile 1 and tile 512 differ", i, name)
			}
		}
		if one.Timings[i].MLP <= 0 {
			t.Errorf("block %d: MLP time %v with ffn_act kept", i, one.Timings[i].MLP)
		}
	}
}

// Without asking, a run keeps no tap (the statistics still see every block output); Outputs
// and Attention are the taps out and q|k, and a tap asked for is kept alone.
func TestTapsKeptAsAsked(t *testing.T) {
	for _, c := range []struct {
		keep tower.Keep
		want []string
	}{
		{tower.Keep{}, nil},
		{tower.Keep{Outputs: true, Attention: true}, []string{"q", "k", "out"}},
		{tower.Keep{Taps: tower.TapSetOf(tower.TapK)}, []string{"q", "k"}},
		{tower.Keep{Outputs: true, Taps: tower.TapSetOf(tower.TapFFNAct, tower.TapLN1)}, []string{"ln1", "ffn_act", "out"}},
	} {
		run, _ := startTiny(t, tower.Settings{Keep: c.keep})
		must(t, run.RunAll(t.Context()))
		if got := run.Probes.Taps(); !slices.Equal(got, c.want) {
			t.Errorf("keep %+v: the store has %v, want %v", c.keep, got, c.want)
		}
		for _, name := range c.want {
			if n := run.Probes.Kept(name); n != 4 {
				t.Errorf("keep %+v: tap %s kept for %d blocks", c.keep, name, n)
			}
		}
		if len(run.Timings) != 4 || run.MeanChange(3) <= 0 {
			t.Errorf("keep %+v: %d blocks timed, change %v", c.keep, len(run.Timings), run.MeanChange(3))
		}
	}
}

// ProbeBytes counts each kept tap of every block at its width, q and k together.
func TestProbeBytesCountsTaps(t *testing.T) {
	c := model.Config{Depth: 3, Hidden: 8, Intermediate: 32}
	per := int64(10 * 8 * 4 * 3)
	for _, x := range []struct {
		taps tower.TapSet
		want int64
	}{
		{tower.TapSetOf(tower.TapOut), per},
		{tower.TapSetOf(tower.TapQ), 2 * per},
		{tower.ProbeTaps, 3 * per},
		{tower.TapSetOf(tower.TapFFNAct), 4 * per},
		{tower.AllTaps, 10*per + 4*per},
	} {
		if got := tower.ProbeBytes(c, 10, x.taps); got != x.want {
			t.Errorf("ProbeBytes(10, %s) = %d, want %d", x.taps, got, x.want)
		}
	}
}

// Tap names parse and print back; an unknown one is an error naming every known tap.
func TestParseTaps(t *testing.T) {
	s, err := tower.ParseTaps(" ffn_act, ln1 ")
	must(t, err)
	if s.String() != "ln1,ffn_act" {
		t.Errorf("parsed %q", s)
	}
	if all, _ := tower.ParseTaps("all"); all != tower.AllTaps || len(all.List()) != 11 {
		t.Errorf("all is %s", all)
	}
	if back, _ := tower.ParseTaps(tower.AllTaps.String()); back != tower.AllTaps {
		t.Errorf("%s does not parse back", tower.AllTaps)
	}
	_, err = tower.ParseTaps("ln1,bogus")
	if err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), strings.Join(tower.TapNames(), ", ")) {
		t.Errorf("unknown tap: %v", err)
	}
}
