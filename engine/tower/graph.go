package tower

// graph.go is the block graph, written once over the Backend primitives (DESIGN.md):
//
//	h = h + proj(attention(rope(q), rope(k), v))    q,k,v = thirds of qkv(LayerNorm1(h))
//	h = h + fc2(gelu_tanh(fc1(LayerNorm2(h))))        row-tiled, tileRows rows at a time
//	merger:    LayerNorm(D) -> 2x2 concat -> fc1 -> gelu_erf -> fc2
//	deepstack: 2x2 concat -> LayerNorm(4D) -> fc1 -> gelu_erf -> fc2
//
// Each intermediate of a block is named here once, right after the op that makes it
// (g.name, g.nameTile: the taps of tap.go); a run keeps those asked for.
//
// Invariant: rope touches q and k only; TANH in the block, ERF in the mergers; qkv columns
// are [q(all heads) | k | v]. Each of the three mutations keeps every shape and yields a
// fluent wrong model; TestParityCatchesMutations (mutation_test.go) runs each against the
// transformers fixtures and fails.

import (
	"context"
	"math"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/model"
)

const layerNormEps = 1e-6 // hard-coded in the HF vision tower

// The graph's short names for a block's weights: engine/model's roles.
const (
	wNorm1W = model.RoleNorm1W
	wNorm1B = model.RoleNorm1B
	wQKVW   = model.RoleQKVW
	wQKVB   = model.RoleQKVB
	wProjW  = model.RoleProjW
	wProjB  = model.RoleProjB
	wNorm2W = model.RoleNorm2W
	wNorm2B = model.RoleNorm2B
	wFC1W   = model.RoleFC1W // a gated MLP's gate
	wFC1B   = model.RoleFC1B
	wFC2W   = model.RoleFC2W // a gated MLP's down projection
	wFC2B   = model.RoleFC2B
	wUpW    = model.RoleUpW // a gated MLP's up projection
	wUpB    = model.RoleUpB
)

// pageBufs are the backend buffers of one page (S rows).
type pageBufs struct {
	h, ln, qkv, attn, tmp backend.Buffer // [S,D], [S,D], [S,3D], [S,D], [S,D]
	tile                  backend.Buffer // [tileRows, I]
	up                    backend.Buffer // [tileRows, I]: a gated MLP's up projection (else none)
	cos, sin              backend.Buffer // [S, hd]
	merged, out           backend.Buffer // [S/4, M], [S/4, O]
	keys                  backend.Buffer // [S, 3D]: the q|k|v rows of the kept keys when some block masks keys; else none
}

type graph struct {
	be       backend.Backend
	cfg      model.Config
	seq      int   // the rows the graph runs: the page's, or after RunRows the kept ones
	held     []int // the page rows its buffers hold, when a subset (rows.go); nil: every row
	lay      *geom.Layout
	views    *geom.Views // each block's rows, segments and keys (geom.Views): interventions shape them
	hooks    []any       // the run's interventions' hooks (intervene: ProjHook, ...), in order
	tileRows int
	buf      pageBufs
	keysHost []float32 // the key gather's host rows, [S, 3D], when some block masks keys
	taps     tapSink   // told where each tap is; nil: nobody asks
}

// tapSink learns where the graph leaves each named intermediate (tap.go).
type tapSink interface {
	// named: x holds t's S rows, stride apart, until the end of the pass (nothing later in
	// the pass writes them).
	named(t Tap, x backend.View, stride int)
	// namedTile: x holds rows r0..r0+rows of t, contiguous, only until the next op.
	namedTile(t Tap, x backend.View, r0, rows int) error
}

// name says that x (S rows, stride apart) is tap t from here to the end of the pass.
func (g *graph) name(t Tap, x backend.View, stride int) {
	if g.taps != nil {
		g.taps.named(t, x, stride)
	}
}

// nameTile says that x holds rows r0..r0+rows of tap t until the next op.
func (g *graph) nameTile(t Tap, x backend.View, r0, rows int) error {
	if g.taps == nil {
		return nil
	}
	return g.taps.namedTile(t, x, r0, rows)
}

func (g *graph) alloc() error {
	S, D, I := g.seq, g.cfg.Hidden, g.cfg.Intermediate
	sizes := []struct {
		dst *backend.Buffer
		n   int
	}{
		{&g.buf.h, S * D}, {&g.buf.ln, S * D}, {&g.buf.qkv, S * 3 * D}, {&g.buf.attn, S * D}, {&g.buf.tmp, S * D},
		{&g.buf.tile, g.tileRows * I}, {&g.buf.cos, S * g.cfg.HeadDim()}, {&g.buf.sin, S * g.cfg.HeadDim()},
		{&g.buf.merged, g.mergedRows() * g.cfg.MergedDim()}, {&g.buf.out, g.mergedRows() * g.cfg.OutHidden},
	}
	if g.cfg.Gated() {
		sizes = append(sizes, struct {
			dst *backend.Buffer
			n   int
		}{&g.buf.up, g.tileRows * I})
	}
	if g.views.MasksKeys() {
		g.keysHost = make([]float32, S*3*D)
		sizes = append(sizes, struct {
			dst *backend.Buffer
			n   int
		}{&g.buf.keys, S * 3 * D})
	}
	for _, s := range sizes {
		b, err := g.be.Alloc(max(s.n, 1))
		if err != nil {
			g.free()
			return err
		}
		*s.dst = b
	}
	return nil
}

func (g *graph) free() {
	for _, b := range []backend.Buffer{g.buf.h, g.buf.ln, g.buf.qkv, g.buf.attn, g.buf.tmp, g.buf.tile, g.buf.up, g.buf.cos, g.buf.sin, g.buf.merged, g.buf.out, g.buf.keys} {
		if b != nil {
			g.be.Free(b)
		}
	}
	g.buf = pageBufs{}
}

// mergedRows is S/m^2: one row per merge window.
func (g *graph) mergedRows() int { return g.seq / (g.cfg.MergeSize * g.cfg.MergeSize) }

func v(b backend.Buffer) backend.View { return backend.View{Buf: b} }

// embed: h = pixels . Wpatch^T + b + posEmbed. The Conv3d with stride = kernel is exactly a
// matmul over the flattened [D, C*Tp*P*P] weight (spec section 4). A family without a bias
// passes a zero Weight; without a position table, pos is nil and nothing is added.
func (g *graph) embed(pixels backend.View, patchW, patchB backend.Weight, pos []float32) {
	S, D := g.seq, g.cfg.Hidden
	g.be.MatMul(v(g.buf.h), pixels, patchW, patchB, S, g.cfg.PatchDim(), D)
	if pos == nil {
		return
	}
	g.be.Upload(v(g.buf.tmp), pos)
	g.be.Add(v(g.buf.h), v(g.buf.tmp), S*D)
}

// attentionHalf: h += proj(attention(rope(q), rope(k), v)) for block i, whose queries attend
// within its own segments (frames, or windows for a windowed block: geom.Layout.SegmentsOf).
func (g *graph) attentionHalf(i int, w *ckpt.BlockWeights) {
	S, D, H, hd := g.seq, g.cfg.Hidden, g.cfg.Heads, g.cfg.HeadDim()
	b := g.be
	g.norm(v(g.buf.ln), v(g.buf.h), w[wNorm1W], w[wNorm1B], S, D)
	g.name(TapLN1, v(g.buf.ln), D)
	b.MatMul(v(g.buf.qkv), v(g.buf.ln), w[wQKVW], w[wQKVB], S, D, 3*D)
	q, k, val := v(g.buf.qkv), v(g.buf.qkv).At(D), v(g.buf.qkv).At(2*D) // [q | k | v] per row
	b.Rope2D(q, 3*D, v(g.buf.cos), v(g.buf.sin), S, H, hd)
	b.Rope2D(k, 3*D, v(g.buf.cos), v(g.buf.sin), S, H, hd) // q and k ONLY: never v
	g.name(TapQ, q, 3*D)
	g.name(TapK, k, 3*D)
	g.name(TapV, val, 3*D)
	segs, k, val := g.keysOf(i, k, val) // the block's segments, and its kept keys when some are masked
	b.Attention(v(g.buf.attn), q, k, val, 3*D, segs, H, hd, float32(1/math.Sqrt(float64(hd))))
	g.beforeProj(i) // the interventions' edits where the heads enter proj; the tap attn is what proj reads
	g.name(TapAttn, v(g.buf.attn), D)
	// proj, and h += proj in its epilogue (fused on the CPU; tmp still holds the product)
	b.MatMulEpilogue(v(g.buf.tmp), v(g.buf.attn), w[wProjW], w[wProjB], S, D, D, backend.Epilogue{Residual: v(g.buf.h)})
	g.name(TapAttnProj, v(g.buf.tmp), D)
	g.name(TapFFNIn, v(g.buf.h), D)
}

// keysOf is what block i's attention reads as keys, over the rows the graph holds: its
// segments and k, v; or, where some keys are masked (geom.View.Keys), the kept rows' q|k|v
// gathered (after rope) into the keys buffer in row order, its k and v, and the segments with
// their key ranges there.
func (g *graph) keysOf(i int, k, val backend.View) ([]backend.Segment, backend.View, backend.View) {
	view, _ := g.views.Held(i).Keyed() // refused when planned (geom.Views.MaskKeys, Drop)
	if view.Keys == nil {
		return view.Segments, k, val
	}
	D := g.cfg.Hidden
	W := 3 * D
	g.be.Download(g.keysHost[:g.seq*W], v(g.buf.qkv))
	for n, r := range view.Keys { // n <= r: compacting in place never reads a row already overwritten
		copy(g.keysHost[n*W:(n+1)*W], g.keysHost[r*W:(r+1)*W])
	}
	g.be.Upload(v(g.buf.keys), g.keysHost[:len(view.Keys)*W])
	return view.Segments, v(g.buf.keys).At(D), v(g.buf.keys).At(2 * D)
}

// beforeProj calls the hooks at attn, where block i's heads enter proj, in the run's order.
func (g *graph) beforeProj(i int) {
	site := intervene.ProjSite{Block: i, Rows: g.seq, Hidden: g.cfg.Hidden, HeadDim: g.cfg.HeadDim(), Attn: v(g.buf.attn), Backend: g.be}
	for _, h := range g.hooks {
		if p, ok := h.(intervene.ProjHook); ok {
			p.BeforeProj(site)
		}
	}
}

// mlpHalf: h += fc2(act(fc1(LayerNorm2(h)))), act the family's (gelu_tanh for Qwen3-VL,
// quick_gelu for Qwen2-VL), tileRows rows at a time through one tile-sized buffer; each row's
// result does not depend on the tile it falls in.
func (g *graph) mlpHalf(ctx context.Context, w *ckpt.BlockWeights) error {
	S, D, I := g.seq, g.cfg.Hidden, g.cfg.Intermediate
	b := g.be
	g.norm(v(g.buf.ln), v(g.buf.h), w[wNorm2W], w[wNorm2B], S, D)
	g.name(TapLN2, v(g.buf.ln), D)
	for r0 := 0; r0 < S; r0 += g.tileRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := min(g.tileRows, S-r0)
		// fc1 (a gated MLP's gate) with the family's activation in its epilogue (TANH, QUICK
		// or SILU); ERF in the mergers
		b.MatMulEpilogue(v(g.buf.tile), v(g.buf.ln).At(r0*D), w[wFC1W], w[wFC1B], t, D, I,
			backend.Epilogue{GELU: true, Form: g.cfg.MLPForm()})
		if g.cfg.Gated() { // act(gate) * up: the tile is then down's input
			b.MatMul(v(g.buf.up), v(g.buf.ln).At(r0*D), w[wUpW], w[wUpB], t, D, I)
			b.Mul(v(g.buf.tile), v(g.buf.up), t*I)
		}
		if err := g.nameTile(TapFFNAct, v(g.buf.tile), r0, t); err != nil {
			return err
		}
		// fc2, and h += fc2 for the tile's rows in its epilogue (LayerNorm2 read h before the
		// loop, so no later tile sees the update)
		b.MatMulEpilogue(v(g.buf.tmp).At(r0*D), v(g.buf.tile), w[wFC2W], w[wFC2B], t, I, D,
			backend.Epilogue{Residual: v(g.buf.h).At(r0 * D)})
	}
	g.name(TapFFNOut, v(g.buf.tmp), D)
	g.name(TapOut, v(g.buf.h), D)
	return nil
}

// merger: the final merger normalizes each token over D, then concatenates each 2x2 window
// (m*m consecutive rows in merge-window order) into one row of M = m*m*D. The result is in buf.out.
func (g *graph) merger(w ckpt.MergerWeights) {
	S, D := g.seq, g.cfg.Hidden
	g.norm(v(g.buf.ln), v(g.buf.h), w.NormW, w.NormB, S, D) // norm over D: pre-shuffle
	g.mergerMLP(v(g.buf.ln), w)
}

// norm is the family's norm over cols: LayerNorm (w, b), or RMSNorm (w; b is the zero Weight).
func (g *graph) norm(out, x backend.View, w, b backend.Weight, rows, cols int) {
	if g.cfg.RMSNorms() {
		g.be.RMSNorm(out, x, w, rows, cols, layerNormEps)
		return
	}
	g.be.LayerNorm(out, x, w, b, rows, cols, layerNormEps)
}

// deepstack: concatenate first, then normalize over M = 4D (post-shuffle norm).
func (g *graph) deepstack(w ckpt.MergerWeights) {
	M := g.cfg.MergedDim()
	g.be.LayerNorm(v(g.buf.ln), v(g.buf.h), w.NormW, w.NormB, g.mergedRows(), M, layerNormEps) // norm over 4D: post-shuffle
	g.mergerMLP(v(g.buf.ln), w)
}

// mergerMLP: fc1 -> gelu_erf -> fc2 over the [S/4, M] view of x.
func (g *graph) mergerMLP(x backend.View, w ckpt.MergerWeights) {
	rows, M, O := g.mergedRows(), g.cfg.MergedDim(), g.cfg.OutHidden
	// fc1 with the GELU in its epilogue: ERF in the mergers, TANH in the block
	g.be.MatMulEpilogue(v(g.buf.merged), x, w.FC1W, w.FC1B, rows, M, M, backend.Epilogue{GELU: true, Form: backend.GELUErf})
	g.be.MatMul(v(g.buf.out), v(g.buf.merged), w.FC2W, w.FC2B, rows, M, O)
}
