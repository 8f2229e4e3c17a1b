package engine

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
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
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
	Checkpoint *Checkpoint
	Backend    backend.Backend
	Res        Residency
	Settings   Settings // normalized
}

// NewEngine makes the weights resident in the chosen mode. It takes ownership of be: when
// it fails, be is closed.
func NewEngine(ck *Checkpoint, be backend.Backend, s Settings) (*Engine, error) {
	s = s.normalized()
	res, err := NewResidency(ck, s.Residency, s.Slots)
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

// Input is a page to run: pixel_values rows and their grids, and the image when there is one.
type Input struct {
	Pixels []float32 // [S, C*Tp*P*P]
	Grids  []geom.Grid
	Image  *imageproc.Page // nil for raw pixel_values
}

// BlockTiming is where one block's time went.
type BlockTiming struct {
	Block     int
	Wait      time.Duration // waiting for weights (pread stall)
	Attention time.Duration // attention half, as the backend reports it
	MLP       time.Duration // MLP half
	Deepstack time.Duration // deepstack merger after this block, if it is a tap
	BytesRead int64
	Wall      time.Duration // everything, host work included
	Ops       OpTimes       // per op kind, on a synchronous (CPU) backend; nil elsewhere
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
	Input  *Input

	next       int
	Embed      []float32 // [S, D] block 0 input
	EmbedTime  time.Duration
	Deepstack  [][]float32 // per tap [S/4, O]
	Merger     []float32   // [S/4, O] once finished
	MergerTime time.Duration
	Timings    []BlockTiming
	Probes     *probe.Store // kept outputs (Keep.Outputs) and q|k (Keep.Attention), for the probes
	prev, cur  []float32
	changes    []float64 // mean change per block
	Observers  []func(BlockResult)
}

// Start checks the input, prepares the page's buffers and computes the embeddings.
func (e *Engine) Start(in *Input) (*Run, error) {
	cfg := e.Checkpoint.Config
	lay, err := geom.NewLayout(cfg.MergeSize, in.Grids)
	if err != nil {
		return nil, err
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
	r := &Run{e: e, Layout: lay, Input: in, timer: timer, Probes: probe.NewStore(lay, cfg.Heads, cfg.HeadDim()),
		g: graph{be: be, cfg: cfg, seq: S, segs: lay.Segments, tileRows: min(e.Settings.TileRows, S)}}
	if err := r.g.alloc(); err != nil {
		return nil, err
	}
	if err := r.embed(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Run) embed() error {
	cfg, be, res := r.e.Checkpoint.Config, r.e.Backend, r.e.Res
	start := time.Now()
	cos, sin := r.Layout.RopeTables(cfg.HeadDim(), cfg.RopeTheta)
	be.Upload(v(r.g.buf.cos), cos)
	be.Upload(v(r.g.buf.sin), sin)
	table := decodeWeight(res.Global("pos_embed.weight"))
	pos := r.Layout.PosEmbed(table, cfg.PosGrid(), cfg.Hidden)
	pix, err := be.Alloc(len(r.Input.Pixels))
	if err != nil {
		return err
	}
	defer be.Free(pix)
	be.Upload(v(pix), r.Input.Pixels)
	r.g.embed(v(pix), res.Global("patch_embed.proj.weight"), res.Global("patch_embed.proj.bias"), pos)
	if _, err := be.Commit(); err != nil {
		return err
	}
	r.takeOps() // embedding ops are not a block's
	r.Embed = r.download(r.g.buf.h, r.g.seq*cfg.Hidden)
	r.prev = r.Embed
	r.EmbedTime = time.Since(start)
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
	decodeInto(out, w)
	return out
}

func (r *Run) download(b backend.Buffer, n int) []float32 {
	out := make([]float32, n)
	r.e.Backend.Download(out, v(b))
	return out
}

// Next is the index of the block Step will run; Depth when all blocks have run.
func (r *Run) Next() int { return r.next }

// Finished says whether the merger has run.
func (r *Run) Finished() bool { return r.Merger != nil }

// Step runs the next block and returns its timings and statistics.
func (r *Run) Step(ctx context.Context) (BlockResult, error) {
	cfg := r.e.Checkpoint.Config
	i := r.next
	if i >= cfg.Depth {
		return BlockResult{}, fmt.Errorf("all %d blocks have run", cfg.Depth)
	}
	if err := ctx.Err(); err != nil {
		return BlockResult{}, err
	}
	start := time.Now()
	w, fetch, err := r.e.Res.Block(i)
	if err != nil {
		return BlockResult{}, err
	}
	t := BlockTiming{Block: i, Wait: fetch.Wait, BytesRead: fetch.BytesRead}
	err = r.runBlock(ctx, w, &t)
	r.e.Res.Done(i) // after the passes committed: the slot may be refilled now
	if err != nil {
		return BlockResult{}, err
	}
	if err := r.tap(i, &t); err != nil {
		return BlockResult{}, err
	}
	t.Ops = r.takeOps()
	res := r.observe(i, &t, start)
	r.next++
	return res, nil
}

func (r *Run) runBlock(ctx context.Context, w *BlockWeights, t *BlockTiming) error {
	var err error
	r.g.attentionHalf(w)
	if t.Attention, err = r.e.Backend.Commit(); err != nil {
		return err
	}
	if r.e.Settings.Keep.Attention {
		r.keepQK()
	}
	if err := r.g.mlpHalf(ctx, w); err != nil {
		r.e.Backend.Commit()
		return err
	}
	t.MLP, err = r.e.Backend.Commit()
	return err
}

// keepQK stores the post-rope q and k columns of the block just run.
func (r *Run) keepQK() {
	S, D := r.g.seq, r.e.Checkpoint.Config.Hidden
	qkv := r.download(r.g.buf.qkv, S*3*D)
	qk := make([]float32, S*2*D)
	for s := 0; s < S; s++ {
		copy(qk[s*2*D:(s+1)*2*D], qkv[s*3*D:s*3*D+2*D])
	}
	r.Probes.AddQK(qk)
}

// tap runs the deepstack merger when block i is a deepstack index.
func (r *Run) tap(i int, t *BlockTiming) error {
	cfg := r.e.Checkpoint.Config
	for k, d := range cfg.Deepstack {
		if d != i {
			continue
		}
		r.g.deepstack(r.mergerWeights(fmt.Sprintf("deepstack_merger_list.%d.", k)))
		var err error
		if t.Deepstack, err = r.e.Backend.Commit(); err != nil {
			return err
		}
		r.Deepstack = append(r.Deepstack, r.download(r.g.buf.out, r.g.mergedRows()*cfg.OutHidden))
	}
	return nil
}

func (r *Run) mergerWeights(prefix string) MergerWeights {
	g := func(s string) backend.Weight { return r.e.Res.Global(prefix + s) }
	return MergerWeights{g("norm.weight"), g("norm.bias"), g("linear_fc1.weight"), g("linear_fc1.bias"), g("linear_fc2.weight"), g("linear_fc2.bias")}
}

// observe downloads the block output, computes statistics and tells the observers.
func (r *Run) observe(i int, t *BlockTiming, start time.Time) BlockResult {
	D := r.e.Checkpoint.Config.Hidden
	r.cur = r.download(r.g.buf.h, r.g.seq*D)
	res := BlockResult{Stats: probe.NewPatchStats(r.prev, r.cur, D)}
	r.changes = append(r.changes, res.Stats.MeanChange)
	if r.e.Settings.Keep.Outputs {
		r.Probes.AddOutput(r.cur)
	}
	r.prev = r.cur
	t.Wall = time.Since(start)
	res.Timing = *t
	r.Timings = append(r.Timings, *t)
	for _, o := range r.Observers {
		o(res)
	}
	return res
}

// Finish runs the final merger on the last block's output.
func (r *Run) Finish(ctx context.Context) (time.Duration, error) {
	cfg := r.e.Checkpoint.Config
	if r.next < cfg.Depth {
		return 0, fmt.Errorf("the merger needs all %d blocks; %d have run", cfg.Depth, r.next)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r.g.merger(r.mergerWeights("merger."))
	d, err := r.e.Backend.Commit()
	if err != nil {
		return 0, err
	}
	r.takeOps()
	r.Merger = r.download(r.g.buf.out, r.g.mergedRows()*cfg.OutHidden)
	r.MergerTime = d
	return d, nil
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
func (r *Run) Config() Config { return r.e.Checkpoint.Config }

// MeanChange is the mean over patches of ||out-in||/||in|| for a block that has run.
func (r *Run) MeanChange(block int) float64 {
	if block < 0 || block >= len(r.changes) {
		return 0
	}
	return r.changes[block]
}

// Hidden returns the current hidden state [S, D] (the last block's output, or the embeddings).
func (r *Run) Hidden() []float32 { return r.prev }

// Close frees the page's backend buffers.
func (r *Run) Close() { r.g.free() }

// ProbeBytes is what a run keeps on the host for the probes of a page of S patches: every
// block's output [S, D] (Keep.Outputs) and post-rope q|k [S, 2D] (Keep.Attention), float32.
func (c Config) ProbeBytes(patches int) (outputs, attention int64) {
	per := int64(patches) * int64(c.Hidden) * 4 * int64(c.Depth)
	return per, 2 * per
}
