package engine

// session.go is the stepping API the CLI and the app drive: prepare a page (image ->
// patches -> embeddings), step one block at a time, cancel between ops, finish with the
// merger; observers see per-block timings and per-patch statistics as they happen.
//
// Invariant: Step(i) runs exactly block i on the hidden state left by block i-1, and
// releases block i's weights (Done) before block i+1 may need its slot. The mutation that
// would silently break it: releasing the slot before the backend's pass has committed — a
// GPU pass would read weights the pread ring is already overwriting.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
)

// Options are the run settings a user can change.
type Options struct {
	Residency     ResidencyMode // mapped (default) or pread
	Slots         int           // pread ring size, at least 2
	TileRows      int           // MLP rows per tile (default 512)
	KeepOutputs   bool          // keep every block's output on the host (dump, app)
	KeepAttention bool          // keep post-rope q and k of every block for AttentionRow
}

// DefaultTileRows is the MLP tile when none is given.
const DefaultTileRows = 512

func (o Options) normalized() Options {
	if o.Residency == "" {
		o.Residency = Mapped
	}
	if o.Slots < 2 {
		o.Slots = 2
	}
	if o.TileRows <= 0 {
		o.TileRows = DefaultTileRows
	}
	return o
}

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
	Opts       Options
}

// NewEngine makes the weights resident in the chosen mode. It takes ownership of be: when
// it fails, be is closed.
func NewEngine(ck *Checkpoint, be backend.Backend, opts Options) (*Engine, error) {
	opts = opts.normalized()
	res, err := NewResidency(ck, opts.Residency, opts.Slots)
	if err != nil {
		be.Close()
		return nil, err
	}
	return &Engine{Checkpoint: ck, Backend: be, Res: res, Opts: opts}, nil
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

// LoadImage decodes and preprocesses an image with the checkpoint's processor settings.
func (e *Engine) LoadImage(path string, lim imageproc.Limits) (*Input, error) {
	img, err := imageproc.Load(path, lim)
	if err != nil {
		return nil, err
	}
	page, err := imageproc.Preprocess(img, e.Checkpoint.Pre)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &Input{Pixels: page.Pixels, Grids: []geom.Grid{{T: page.Grid[0], H: page.Grid[1], W: page.Grid[2]}}, Image: page}, nil
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

// PatchStats are per-patch statistics of a block's output.
type PatchStats struct {
	Norm, Mean, MaxAbs []float32 // of the output row
	Change             []float32 // ||out-in|| / ||in||
}

// BlockResult is what an observer sees after each block.
type BlockResult struct {
	Timing BlockTiming
	Stats  PatchStats
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
	Outputs    [][]float32 // per block [S, D], when KeepOutputs
	Deepstack  [][]float32 // per tap [S/4, O]
	Merger     []float32   // [S/4, O] once finished
	MergerTime time.Duration
	Timings    []BlockTiming
	probeMu    sync.RWMutex // probes may read qk and Outputs while Step appends to them
	qk         [][]float32  // per block [S, 2D] post-rope q|k, when KeepAttention
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
	r := &Run{e: e, Layout: lay, Input: in, timer: timer,
		g: graph{be: be, cfg: cfg, seq: S, segs: lay.Segments, tileRows: min(e.Opts.TileRows, S)}}
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
	if r.e.Opts.KeepAttention {
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
	r.probeMu.Lock()
	r.qk = append(r.qk, qk)
	r.probeMu.Unlock()
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
	res := BlockResult{Stats: patchStats(r.prev, r.cur, D)}
	var sum float64
	for _, c := range res.Stats.Change {
		sum += float64(c)
	}
	r.changes = append(r.changes, sum/float64(max(len(res.Stats.Change), 1)))
	if r.e.Opts.KeepOutputs {
		r.probeMu.Lock()
		r.Outputs = append(r.Outputs, r.cur)
		r.probeMu.Unlock()
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

func patchStats(in, out []float32, d int) PatchStats {
	n := len(out) / d
	st := PatchStats{Norm: make([]float32, n), Mean: make([]float32, n), MaxAbs: make([]float32, n), Change: make([]float32, n)}
	for p := 0; p < n; p++ {
		var ss, sum, diff, inSS float64
		var mx float64
		for j, x := range out[p*d : (p+1)*d] {
			xf, xin := float64(x), float64(in[p*d+j])
			ss += xf * xf
			sum += xf
			mx = math.Max(mx, math.Abs(xf))
			diff += (xf - xin) * (xf - xin)
			inSS += xin * xin
		}
		st.Norm[p], st.Mean[p], st.MaxAbs[p] = float32(math.Sqrt(ss)), float32(sum/float64(d)), float32(mx)
		st.Change[p] = float32(math.Sqrt(diff) / math.Max(math.Sqrt(inSS), 1e-30))
	}
	return st
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

// keptQK returns block's post-rope q|k rows; safe while another goroutine steps the run.
func (r *Run) keptQK(block int) ([]float32, error) {
	r.probeMu.RLock()
	defer r.probeMu.RUnlock()
	if block < 0 || block >= len(r.qk) {
		return nil, fmt.Errorf("attention of block %d is not kept (%d blocks kept; run with attention kept)", block, len(r.qk))
	}
	return r.qk[block], nil
}

// keptBlocks is how many blocks have q|k kept; safe while another goroutine steps the run.
func (r *Run) keptBlocks() int {
	r.probeMu.RLock()
	defer r.probeMu.RUnlock()
	return len(r.qk)
}

// AttentionRow returns softmax(q_query . K^T * scale) of one head of one block, [S] in
// sequence order, zero outside the query's segment. It needs KeepAttention, and is safe
// to call while another goroutine steps the run.
func (r *Run) AttentionRow(block, head, query int) ([]float32, error) {
	cfg := r.e.Checkpoint.Config
	qk, err := r.keptQK(block)
	if err != nil {
		return nil, err
	}
	if head < 0 || head >= cfg.Heads || query < 0 || query >= r.g.seq {
		return nil, fmt.Errorf("head %d / query %d outside %d heads / %d patches", head, query, cfg.Heads, r.g.seq)
	}
	D, hd := cfg.Hidden, cfg.HeadDim()
	q := qk[query*2*D+head*hd : query*2*D+(head+1)*hd]
	seg := r.Layout.SegmentOf(query)
	row := make([]float32, r.g.seq)
	scale := 1 / math.Sqrt(float64(hd))
	mx := math.Inf(-1)
	scores := make([]float64, seg.End-seg.Start)
	for j := seg.Start; j < seg.End; j++ {
		k := qk[j*2*D+D+head*hd : j*2*D+D+(head+1)*hd]
		var dot float64
		for x := range q {
			dot += float64(q[x]) * float64(k[x])
		}
		scores[j-seg.Start] = dot * scale
		mx = math.Max(mx, dot*scale)
	}
	var z float64
	for j, s := range scores {
		scores[j] = math.Exp(s - mx)
		z += scores[j]
	}
	for j, s := range scores {
		row[seg.Start+j] = float32(s / z)
	}
	return row, nil
}

// ProbeBytes is what a run keeps on the host for the probes of a page of S patches: every
// block's output [S, D] (KeepOutputs) and post-rope q|k [S, 2D] (KeepAttention), float32.
func (c Config) ProbeBytes(patches int) (outputs, attention int64) {
	per := int64(patches) * int64(c.Hidden) * 4 * int64(c.Depth)
	return per, 2 * per
}
