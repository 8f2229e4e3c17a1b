package tower

// runtaps.go: how a run captures the taps the graph names (graph.name, graph.nameTile): where
// each was left in the pass, the downloads after the pass commits, and handing them to the
// probe Store once the block is whole.
//
// Invariant: a tap is read from where the graph named it only after the pass that wrote it
// has committed, and before the next pass starts (startPass clears the sites); a tiled tap
// (ffn_act) is read tile by tile before the next tile overwrites the buffer.
// Mutation that would silently break it: reading a tap site after the MLP pass started: the
// attention pass's ln1 would be read from a buffer LayerNorm2 has already overwritten, and
// every kept ln1 would be ln2.
//
// A block output the Store does not keep is read by the run alone (the statistics, the next
// block's input check): once the block that took it as input is done it is spare, and the
// next output comes down into it. One that is kept, lent (Hidden) or frozen by a token drop
// is never written again (Run.curOwn and prevOwn say which).
// Mutation that would silently break it: marking a kept output as the run's own: block i's
// output in the Store would turn into block i+2's (TestRunReusesOnlyTheOutputsNoOneReads).

import (
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/internal/par"
)

// named records where tap t is for this pass (graph.name).
func (r *Run) named(t Tap, x backend.View, stride int) { r.sites[t] = tapSite{x, stride, true} }

// namedTile downloads one tile of a kept tiled tap (ffn_act) before the next tile overwrites
// it: the pass so far is committed first, so the MLP half becomes one pass per tile (their
// times are summed into the MLP time; the downloads between them are not).
func (r *Run) namedTile(t Tap, x backend.View, r0, rows int) error {
	if !r.e.Settings.Keep.Taps.Has(t) {
		return nil
	}
	be, W := r.e.Backend, t.Width(r.Config())
	d, err := be.Commit()
	r.tileTime += d
	if err != nil {
		return err
	}
	if r.act == nil {
		r.act = r.freshRows(r.g.seq * W)
	}
	be.Download(r.act[r0*W:(r0+rows)*W], x)
	r.restartClock() // the download is not the MLP's
	return nil
}

// takeTaps downloads the taps named in the pass just committed that the run keeps, and the
// block output always (its statistics need it). A strided tap (q, k, v in qkv) is read row by
// row from its place in the strided buffer. q and k, when both are kept, come down together
// into the q|k rows the probes read ([S, 2D]), returned as qk and not in the map: one copy
// of them, not three (q, k, then interleaved).
func (r *Run) takeTaps() (taps map[Tap][]float32, qk []float32) {
	want := r.e.Settings.Keep.Taps | TapSetOf(TapOut)
	if r.needsQK() && !want.Has(TapQ) { // a hook reads this block's attention (a drop ranks the tokens by it)
		if qk := r.takeQK(want | TapSetOf(TapQ, TapK)); qk != nil { // the attention pass's
			r.hookQK = qk
		}
	}
	if qk = r.takeQK(want); qk != nil {
		want &^= TapSetOf(TapQ, TapK)
	}
	taps = r.downloadTaps(want &^ TapSetOf(TapOut))
	if out := r.sites[TapOut]; out.named {
		taps[TapOut] = r.takeOut(out)
	}
	return taps, qk
}

// takeOut downloads the block output: into the spare (an earlier output nothing reads any
// more: a run that keeps no output writes the same pages block after block) when there is
// one, else into fresh memory (Run.freshRows), whose first touch costs (a 4.7 MB output at 1,024
// patches: 6-7 ms a block of host work on a 2-core VM before the spare).
func (r *Run) takeOut(site tapSite) []float32 {
	S, D := r.g.seq, r.Config().Hidden
	var out []float32
	if cap(r.spare) >= S*D { // only an output the run alone read becomes spare (Step)
		out, r.spare = r.spare[:S*D], nil
	} else {
		out = r.freshRows(S * D)
	}
	r.downloadRows(out, D, site.x, site.stride, S, D)
	return out
}

// takeQK downloads q|k ([S, 2D]: each row q's then k's) when want holds both and this pass
// named them; else nil.
func (r *Run) takeQK(want TapSet) []float32 {
	q, k, S, D := r.sites[TapQ], r.sites[TapK], r.g.seq, r.Config().Hidden
	if !want.Has(TapQ) || !want.Has(TapK) || !q.named || !k.named {
		return nil
	}
	qk := r.freshRows(S * 2 * D)
	r.downloadRows(qk, 2*D, q.x, q.stride, S, D)
	r.downloadRows(qk[D:], 2*D, k.x, k.stride, S, D)
	return qk
}

// downloadTaps downloads the taps of want named in the pass just committed, each [S, W].
func (r *Run) downloadTaps(want TapSet) map[Tap][]float32 {
	S, cfg := r.g.seq, r.Config()
	got := map[Tap][]float32{}
	for _, t := range want.List() {
		site := r.sites[t]
		if !site.named {
			continue
		}
		W := t.Width(cfg)
		vals := r.freshRows(S * W)
		r.downloadRows(vals, W, site.x, site.stride, S, W)
		got[t] = vals
	}
	return got
}

// freshRows is new memory for n floats that a download is about to fill whole, its pages
// mapped in one call (populate) where the copy would fault them in one at a time: random 8B,
// 504 patches, q|k and outputs kept (run --dump), 2 threads, a 2-core AMD VM, five interleaved
// pairs: host work a block 3.4-3.8 ms (median over the blocks) against 5.7-6.0, the worst block
// 5.0-7.4 ms against 9.7-26.5. Nothing changes where the memory is already mapped. The pages
// are mapped on the run's threads (populate).
func (r *Run) freshRows(n int) []float32 {
	f := make([]float32, n)
	ckpt.Populate(f, r.e.Settings.Threads)
	return f
}

// downloadRowsPerTask is the fewest rows a goroutine of a download takes.
const downloadRowsPerTask = 64

// downloadRows copies rows rows of width W, srcStride apart in src, into dst, dstStride
// apart, the rows spread over the run's threads: a block output at 5,120 patches is ~24 MB
// of fresh pages, whose faults and copy took ~18 ms a block on one thread (host work, in the
// wall). Rows that lie back to back on both sides go in one Download per range.
func (r *Run) downloadRows(dst []float32, dstStride int, src backend.View, srcStride, rows, W int) {
	be := r.e.Backend
	par.RangesOn(rows, downloadRowsPerTask, r.e.Settings.Threads, func(lo, hi int) {
		if srcStride == W && dstStride == W {
			be.Download(dst[lo*W:hi*W], src.At(lo*W))
			return
		}
		for s := lo; s < hi; s++ {
			be.Download(dst[s*dstStride:][:W], src.At(s*srcStride))
		}
	})
}

// keepTaps hands a finished block's kept taps to the Store in graph order (q and k as the
// one q|k takeTaps brought down), and makes its output the current hidden state.
func (r *Run) keepTaps(taps map[Tap][]float32, qk []float32) {
	keep := r.e.Settings.Keep.Taps
	if d := r.sub; d != nil { // a block after a token drop ran the kept rows: back to the page
		S, cfg := r.Layout.Rows(), r.Config()
		for t, x := range taps {
			var fill []float32
			if t == TapOut {
				fill = d.frozen // a dropped row's state stays what it was
			}
			taps[t] = d.expand(x, t.Width(cfg), S, fill)
		}
		if qk != nil {
			qk = d.expand(qk, 2*cfg.Hidden, S, nil)
		}
	}
	r.cur, r.curOwn = taps[TapOut], !keep.Has(TapOut) // (expanded after a drop: a copy of its own)
	for _, t := range keep.List() {
		switch t {
		case TapQ:
			r.Probes.AddQK(qk)
		case TapK: // with q
		default:
			r.Probes.AddTap(t.String(), taps[t])
		}
	}
}
