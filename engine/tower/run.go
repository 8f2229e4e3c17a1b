package tower

// run.go is the stepping API a Session drives: prepare a page (image -> patches ->
// embeddings), step one block at a time, cancel between ops, finish with the merger;
// observers see per-block timings and per-patch statistics as they happen.
//
// Invariant: Step(i) runs exactly block i on the hidden state left by block i-1, and
// releases block i's weights (Done) before block i+1 may need its slot. The mutation that
// would silently break it: releasing the slot before the backend's pass has committed — a
// GPU pass would read weights the pread ring is already overwriting.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/intervene"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/probe"
)

// Engine is a checkpoint, its resident weights and a backend. The engine owns the backend:
// Close releases the backend, then the weights.
//
// Invariant: a backend's wrappers over the weights' memory (Metal's no-copy buffers over
// the mapping and the pread slots) are released before that memory is unmapped. Mutation
// that would silently break it: closing the residency first — Apple requires the memory
// of a no-copy buffer to outlive the buffer, and nothing shows until a Mac reuses it.
type Engine struct {
	Checkpoint *ckpt.Checkpoint
	Backend    backend.Backend
	Res        ckpt.Residency
	Settings   Settings // normalized

	// windows, when set, makes some blocks of every page attend within windows
	// (geom.Layout.SetWindows): the seam a model family with window attention (Qwen2.5-VL)
	// fills. Today only tests set it (export_test.go).
	windows func(lay *geom.Layout) error
}

// NewEngine makes the weights resident in the chosen mode. It takes ownership of be: when
// it fails, be is closed.
func NewEngine(ck *ckpt.Checkpoint, be backend.Backend, s Settings) (*Engine, error) {
	if err := s.Validate(); err != nil {
		be.Close()
		return nil, err
	}
	s = s.Normalized()
	res, err := ckpt.NewResidency(ck, s.Residency, s.Slots)
	if err != nil {
		be.Close()
		return nil, err
	}
	return &Engine{Checkpoint: ck, Backend: be, Res: res, Settings: s}, nil
}

// Close releases the backend, then the weights (in that order: see Engine). Runs of this
// engine should be closed first; a Run closed later frees nothing twice.
func (e *Engine) Close() error {
	return errors.Join(e.Backend.Close(), e.Res.Close())
}

// BlockTiming is where one block's time went.
type BlockTiming struct {
	Block     int
	Wait      time.Duration // waiting for weights (pread stall)
	Attention time.Duration // attention half, as the backend reports it
	MLP       time.Duration // MLP half
	Deepstack time.Duration // deepstack merger after this block, if it has one
	BytesRead int64
	Wall      time.Duration // everything, host work included
	// When the block and its passes began, since the run started (the host's clock; with
	// pauses between steps these are a timeline, not work): for trace exports.
	At, AttentionAt, MLPAt, DeepstackAt time.Duration
	Ops                                 OpTimes // per op kind, on a synchronous (CPU) backend; nil elsewhere
}

// Host is the block's host work: its wall less the weight wait, the two halves and the
// deepstack merger (downloading the taps, the statistics and finite checks), never negative.
func (t BlockTiming) Host() time.Duration {
	return max(0, t.Wall-t.Wait-t.Attention-t.MLP-t.Deepstack)
}

// BlockResult is what an observer sees after each block.
type BlockResult struct {
	Timing BlockTiming
	Stats  probe.PatchStats
}

// Run is one page going through the tower.
type Run struct {
	e      *Engine
	timer  *opTimer // non-nil on a synchronous backend
	g      graph
	Layout *geom.Layout
	Input  *ckpt.Input

	next       int
	began      time.Time // when Start began: the origin of the timings' At fields
	Embed      []float32 // [S, D] block 0 input
	EmbedTime  time.Duration
	EmbedAt    time.Duration // when the embedding began, since the run started
	Deepstack  [][]float32   // per deepstack merger [S/4, O]
	Merger     []float32     // [S/4, O] once finished
	MergerTime time.Duration
	MergerAt   time.Duration // when the merger's pass began
	Timings    []BlockTiming
	NonFinite  *guard.NonFinite   // where the first NaN or Inf appeared (nil: none so far)
	Probes     *probe.Store       // the kept taps (Settings.Keep.Taps) of every block run, for the probes
	Ablation   intervene.Ablation // the heads this run ablates (Settings.Ablate, or StartWith's)
	sub        *rowSubset         // the rows the later blocks run, once a hook cut them (rows.go)
	hookQK     []float32          // the block in flight's q|k, taken for a hook when the run keeps none
	patched    bool               // a patch was put on the run (patch.go): no Resume from a base
	prev, cur  []float32          // the last block's input and output, on the host
	// Whether only the run reads prev and cur (a block output it downloaded for its own
	// statistics and checks, TapOut not kept, not lent, not frozen by a drop): such a buffer
	// becomes spare once the block that took it as input is done (runtaps.go).
	prevOwn, curOwn bool
	spare           []float32 // a block output nothing reads any more: the next one comes down into it
	changes         []float64 // mean change per block
	Observers       []func(BlockResult)

	sites    [numTaps]tapSite // where the pass being encoded left each tap
	act      []float32        // ffn_act of the block in flight, [S, I], filled tile by tile
	tileTime time.Duration    // the ffn_act tile passes of the MLP half in flight
}

// rowSubset (rows.go) is the page rows the later blocks run (the blocks' order, increasing, whole merge
// units) and the state the others keep.
type rowSubset struct {
	after  int
	rows   []int     // the page rows run, in the blocks' order
	units  []int     // their merge units, in the blocks' order: unit u is rows u*m*m .. (u+1)*m*m-1
	frozen []float32 // block after's output [S, D]: what a row not run keeps as its output
}

// tapSite (runtaps.go) is where the graph left a tap in the pass being encoded (graph.name).
type tapSite struct {
	x      backend.View
	stride int
	named  bool
}

// Start checks the input, prepares the page's buffers and computes the embeddings.
func (e *Engine) Start(in *ckpt.Input) (run *Run, err error) {
	return e.StartWith(in, e.Settings.Ablate)
}

// StartWith is Start with ablation a instead of the settings' (a sweep over heads runs one
// engine, its weights resident, once per head).
func (e *Engine) StartWith(in *ckpt.Input, a intervene.Ablation) (run *Run, err error) {
	defer e.faultsAsErrors()(&err)
	cfg := e.Checkpoint.Config
	lay, err := geom.NewLayout(cfg.MergeSize, in.Grids)
	if err != nil {
		return nil, err
	}
	if err := cfg.Arrange(lay); err != nil { // the family's row order and attention windows
		return nil, err
	}
	if e.windows != nil {
		if err := e.windows(lay); err != nil {
			return nil, err
		}
	}
	S := lay.Rows()
	if len(in.Pixels) != S*cfg.PatchDim() {
		return nil, fmt.Errorf("pixel_values hold %d values; the grids need %d rows of %d", len(in.Pixels), S, cfg.PatchDim())
	}
	be := e.Backend
	var timer *opTimer
	if be.Caps().Synchronous {
		timer = newOpTimer(be)
		be = timer
	}
	r := &Run{e: e, Layout: lay, Input: in, timer: timer, Probes: probe.NewStore(lay, cfg.Heads, cfg.HeadDim()), began: time.Now(),
		g: graph{be: be, cfg: cfg, seq: S, lay: lay, views: geom.NewViews(lay, cfg.Depth), tileRows: min(e.Settings.TileRows, S)}}
	r.g.taps = r
	r.Probes.Views = r.g.views // the maps score what the blocks saw
	set := e.Settings.Set
	set.Ablate, r.Ablation = a, a
	if r.g.hooks, err = planHooks(set, r.tower()); err != nil {
		return nil, err
	}
	if err := r.g.alloc(); err != nil {
		return nil, err
	}
	if err := r.embed(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// tower is the tower and page the run's interventions are planned for.
func (r *Run) tower() intervene.Tower {
	c := r.Config()
	return intervene.Tower{Depth: c.Depth, Heads: c.Heads, HeadDim: c.HeadDim(), Hidden: c.Hidden, MergeSize: c.MergeSize,
		PatchDim: c.PatchDim(), Channels: c.InChannels, Layout: r.Layout, Views: r.g.views}
}

// planHooks plans set's interventions on t, in the set's order: their hooks.
func planHooks(set intervene.Set, t intervene.Tower) ([]any, error) {
	var hooks []any
	for _, iv := range set.List() {
		h, err := iv.Plan(t)
		if err != nil {
			return nil, err
		}
		if h != nil {
			hooks = append(hooks, h)
		}
	}
	return hooks, nil
}

// pixels is the page's pixel_values as the hooks before the embedding leave them (the
// processor's order).
func (r *Run) pixels() []float32 {
	px := r.Input.Pixels
	for _, h := range r.g.hooks {
		if p, ok := h.(intervene.PixelsHook); ok {
			px = p.Pixels(px)
		}
	}
	return px
}

func (r *Run) embed() error {
	cfg, be, res := r.e.Checkpoint.Config, r.e.Backend, r.e.Res
	start := time.Now()
	r.EmbedAt = start.Sub(r.began)
	cos, sin := r.Layout.RopeTables(cfg.HeadDim(), cfg.RopeTheta)
	be.Upload(v(r.g.buf.cos), cos)
	be.Upload(v(r.g.buf.sin), sin)
	patchW, patchB, posW := ckpt.EmbedWeights(cfg, res)
	var pos []float32 // none without a position table: the rope alone places the patches
	if cfg.HasPosEmbed() {
		pos = r.Layout.PosEmbed(decodeWeight(posW), cfg.PosGrid(), cfg.Hidden)
	}
	pix, err := be.Alloc(len(r.Input.Pixels))
	if err != nil {
		return err
	}
	defer be.Free(pix)
	pixels := r.pixels()                                              // in the processor's order (an occlusion's hook)
	be.Upload(v(pix), r.Layout.ToLayoutOrder(pixels, cfg.PatchDim())) // rows in the blocks' order
	r.g.embed(v(pix), patchW, patchB, pos)
	if _, err := be.Commit(); err != nil {
		return err
	}
	r.takeOps() // embedding ops are not a block's
	r.Embed = r.download(r.g.buf.h, r.g.seq*cfg.Hidden)
	r.prev = r.Embed
	r.EmbedTime = time.Since(start)
	r.checkEmbedding()
	return nil
}

// takeOps returns the per-op times since the last call (nil off a synchronous backend).
func (r *Run) takeOps() OpTimes {
	if r.timer == nil {
		return nil
	}
	return r.timer.take()
}

func decodeWeight(w backend.Weight) []float32 {
	out := make([]float32, w.Elems())
	ckpt.DecodeInto(out, w)
	return out
}

func (r *Run) download(b backend.Buffer, n int) []float32 {
	out := make([]float32, n)
	r.e.Backend.Download(out, v(b))
	return out
}

// Next is the index of the block Step will run; Depth when all blocks have run.
func (r *Run) Next() int { return r.next }

// CancelNote says how far a cancelled run got, as the window and the CLI both say it.
func (r *Run) CancelNote() string {
	depth := r.e.Checkpoint.Config.Depth
	if r.next >= depth {
		return fmt.Sprintf("cancelled after all %d blocks (the merger did not finish)", depth)
	}
	return fmt.Sprintf("cancelled after %d of %d blocks (block %d did not finish)", r.next, depth, r.next)
}

// Finished says whether the merger has run.
func (r *Run) Finished() bool { return r.Merger != nil }

// Step runs the next block and returns its timings and statistics.
func (r *Run) Step(ctx context.Context) (res BlockResult, err error) {
	defer r.e.faultsAsErrors()(&err)
	cfg := r.e.Checkpoint.Config
	i := r.next
	if i >= cfg.Depth {
		return BlockResult{}, fmt.Errorf("all %d blocks have run", cfg.Depth)
	}
	if err := ctx.Err(); err != nil {
		return BlockResult{}, err
	}
	r.e.Backend.Bind(ctx) // a cancel stops the op in flight, not only the next one
	defer r.e.Backend.Bind(context.Background())
	start := time.Now()
	at := start.Sub(r.began)
	w, fetch, err := r.e.Res.Block(i)
	if err != nil {
		return BlockResult{}, err
	}
	t := BlockTiming{Block: i, Wait: fetch.Wait, BytesRead: fetch.BytesRead, At: at}
	in, inOwn := r.prev, r.prevOwn
	err = r.runBlock(ctx, i, w, &t)
	r.e.Res.Done(i) // after the passes committed: the slot may be refilled now
	if err != nil {
		return BlockResult{}, err
	}
	r.afterBlock(i) // the hooks' edits of the output, before anything reads it (rows.go)
	if err := r.deepstackAfter(i, &t); err != nil {
		return BlockResult{}, err
	}
	if err := r.beforeNext(ctx, i); err != nil { // after the block's deepstack: it saw every token (rows.go)
		return BlockResult{}, err
	}
	t.Ops = r.takeOps()
	res = r.observe(i, &t, start)
	r.next++
	if err := r.checkBlock(ctx, i, in, res.Stats); err != nil {
		return res, err
	}
	if inOwn { // block i's input: read for the last time by its statistics and check
		r.spare = in
	}
	return res, nil
}

// runBlock runs block i's two passes and keeps its taps once both have committed (a block
// cancelled half way keeps nothing, so the Store's lists stay one entry per block run).
func (r *Run) runBlock(ctx context.Context, i int, w *ckpt.BlockWeights, t *BlockTiming) error {
	be := r.e.Backend
	var err error
	// Each At is read before the backend's clock restarts, so At+duration ends no later than
	// the work did and the next event on the timeline never begins inside this one.
	t.AttentionAt = time.Since(r.began)
	r.startPass()
	r.g.attentionHalf(i, w)
	if t.Attention, err = be.Commit(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // the pass may have stopped part way: discard it
		return err
	}
	taps, qk := r.takeTaps()
	t.MLPAt = time.Since(r.began)
	r.startPass()
	if err := r.g.mlpHalf(ctx, w); err != nil {
		be.Commit()
		return err
	}
	mlp, err := be.Commit()
	t.MLP = r.tileTime + mlp // with ffn_act kept, the MLP half is one pass per tile: their sum
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	mlpTaps, _ := r.takeTaps() // q and k are the attention pass's
	for tap, x := range mlpTaps {
		taps[tap] = x
	}
	if r.act != nil {
		taps[TapFFNAct] = r.act
	}
	r.keepTaps(taps, qk)
	return nil
}

// startPass forgets the previous pass's tap sites and restarts the backend's pass clock, so
// the host work between passes (downloading taps, statistics) is not counted in the next
// pass (a synchronous backend's Commit is the wall time since the previous one; a GPU's
// empty Commit is free).
func (r *Run) startPass() {
	r.sites, r.act, r.tileTime = [numTaps]tapSite{}, nil, 0
	r.restartClock()
}

// restartClock commits an empty pass: the next Commit times only what is encoded after it.
func (r *Run) restartClock() { r.e.Backend.Commit() }

// deepstackAfter runs the deepstack merger when block i is a deepstack index.
func (r *Run) deepstackAfter(i int, t *BlockTiming) error {
	cfg := r.e.Checkpoint.Config
	for k, d := range cfg.Deepstack {
		if d != i {
			continue
		}
		w, fetch, err := r.e.Res.Merger(model.DeepstackPrefix(k))
		if err != nil {
			return err
		}
		t.Wait += fetch.Wait // a weight read, as the block's own (pread reads mergers when they run)
		t.BytesRead += fetch.BytesRead
		t.DeepstackAt = time.Since(r.began) // before the clock restarts, as in runBlock
		r.restartClock()                    // the taps' downloads are not the merger's
		r.g.deepstack(w)
		if t.Deepstack, err = r.e.Backend.Commit(); err != nil {
			return err
		}
		r.Deepstack = append(r.Deepstack, r.mergedOut())
		r.checkMerger(model.DeepstackPrefix(k), i, r.cur, r.Deepstack[len(r.Deepstack)-1], w)
	}
	return nil
}

// observe computes the statistics of the block output (kept by runBlock) and tells the
// observers.
func (r *Run) observe(i int, t *BlockTiming, start time.Time) BlockResult {
	D := r.e.Checkpoint.Config.Hidden
	res := BlockResult{Stats: probe.NewPatchStats(r.prev, r.cur, D, r.e.Settings.Threads)}
	if d := r.sub; d != nil && i > d.after { // the mean over the patches the block ran, not the frozen ones
		var sum float64
		for _, row := range d.rows {
			sum += float64(res.Stats.Change[row])
		}
		res.Stats.MeanChange = sum / float64(len(d.rows))
	}
	r.changes = append(r.changes, res.Stats.MeanChange)
	r.prev, r.prevOwn = r.cur, r.curOwn
	t.Wall = time.Since(start)
	res.Timing = *t
	r.Timings = append(r.Timings, *t)
	for _, o := range r.Observers {
		o(res)
	}
	return res
}

// Finish runs the final merger on the last block's output.
func (r *Run) Finish(ctx context.Context) (d time.Duration, err error) {
	defer r.e.faultsAsErrors()(&err)
	cfg := r.e.Checkpoint.Config
	if r.next < cfg.Depth {
		return 0, fmt.Errorf("the merger needs all %d blocks; %d have run", cfg.Depth, r.next)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	w, _, err := r.e.Res.Merger("merger.")
	if err != nil {
		return 0, err
	}
	r.MergerAt = time.Since(r.began) // before the clock restarts, as in runBlock
	r.restartClock()                 // the host work and the weight read since the last block are not the merger's
	r.g.merger(w)
	d, err = r.e.Backend.Commit()
	if err != nil {
		return 0, err
	}
	r.takeOps()
	// in the processor's order, whatever order the blocks saw the rows in (Qwen2.5-VL's windows)
	r.Merger = r.mergedOut()
	r.checkMerger("merger.", cfg.Depth-1, r.prev, r.Merger, w)
	r.MergerTime = d
	return d, nil
}

// mergedOut is a merger's output just committed, [S/m^2, O] in the processor's order: a
// token dropped before it is a 0 row.
func (r *Run) mergedOut() []float32 {
	O := r.Config().OutHidden
	out := r.download(r.g.buf.out, r.g.mergedRows()*O)
	if r.sub != nil {
		out = r.sub.expandMerged(out, O, r.Layout.Rows()/(r.Config().MergeSize*r.Config().MergeSize))
	}
	return r.Layout.ToProcessorOrder(out, O)
}

// RunAll steps through the remaining blocks and the merger.
func (r *Run) RunAll(ctx context.Context) error {
	for r.next < r.e.Checkpoint.Config.Depth {
		if _, err := r.Step(ctx); err != nil {
			return err
		}
	}
	_, err := r.Finish(ctx)
	return err
}

// Config is the model's config.
func (r *Run) Config() model.Config { return r.e.Checkpoint.Config }

// Engine is the engine the run runs on (its checkpoint, backend and settings).
func (r *Run) Engine() *Engine { return r.e }

// Settings are the engine's settings with this run's ablation (StartWith's, if another): the
// settings as run, which a dump's provenance records.
func (r *Run) Settings() Settings {
	s := r.e.Settings
	s.Ablate = r.Ablation
	return s
}

// MeanChange is the mean over patches of ||out-in||/||in|| for a block that has run.
func (r *Run) MeanChange(block int) float64 {
	if block < 0 || block >= len(r.changes) {
		return 0
	}
	return r.changes[block]
}

// Hidden returns the current hidden state [S, D] (the last block's output, or the embeddings).
// The caller may keep it: the run never writes into it again.
func (r *Run) Hidden() []float32 {
	r.prevOwn = false // lent
	return r.prev
}

// Close frees the page's backend buffers.
func (r *Run) Close() { r.g.free() }
