package probe

// rollouttable.go: the attention rollout of every query at once, so that a click or a hover
// reads a row instead of recomputing it. Per segment the table holds the product
//
//	P_b = Â_b Â_{b-1} ... Â_0,   Â_l = rownorm(0.5*drop(fuse_h A_l) + 0.5*I)
//
// (Rollout's Â_l, rollout.go and attention.go: the same fusion, the same discard, the same
// float64 row), whose row q is Rollout(q, b). It is extended block by block as a run's
// blocks finish — P_b = Â_b · P_{b-1}, one L x L x L product per block — and read at any
// time, also while a block is being folded in: a row (Row, RowAt), or the mean of the rows
// (Whole: the whole-image rollout; Qwen's tower has no class token).
//
// Cost, per block and segment of L patches (H heads of hd): every query's fused row, H*L^2*hd
// multiply-adds to score and H*L^2 exponentials (as Rollout pays for every block of every
// click), then the product, L^3 multiply-adds. At L = 5,120 (the 8B, 16 x 72) that is 30 G
// and 134 G multiply-adds. A block is cut into tasks of taskRows query rows: a task scores its
// rows (32 queries to the lanes of kernel.FMA6x32 with AVX-512 and no discard,
// rolloutcols.go; else fusedRows, Rollout's float64 rows), turns them into Â rows (float64,
// then float32) and multiplies them by P_{b-1} through the package's micro-kernels
// (kernel.FMA6x32 with AVX-512, else FMA6x16, else a generic loop), so no L x L Â is ever held
// without a discard (a discard needs the block's whole fused matrix for its threshold, as
// Rollout does, and scores through fusedRows so that its drops are Rollout's bit for bit). A
// done ctx stops every task at its next 6 or 32 query rows or k-block; the block is then not
// folded in (measured at 5,120: 18 ms at most, ~70 ms more when the cancel lands in a
// discard's threshold, newDropped).
//
// Measured (rollouttable_bench_test.go; this 2-core AVX-512 Xeon, quiet, 3 runs each): a block
// at 1,024 patches 45-58 ms (the product 11 ms at 195-200 GFLOP/s counting 2*L^3; the scoring
// 30-34 ms), at 5,120 2.1-2.8 s (the product 1.3-1.5 s at 175-210 GFLOP/s, the scoring
// 0.8-0.9 s), with a discard 5.6-6.3 s (its float64 scoring ~3.5 s); block 0 has no product.
// A row at 5,120: 17-20 µs. One product is L*L float32 (100 MiB at 5,120): RolloutTableBytes.
//
// Layout: each product is kept in strips of nr columns (the kernel's lanes), k-major:
// P[s*L*nr + k*nr + c] = P_{k, s*nr+c} (columns past L are padding, never read). That is the
// kernel's packed W operand as it lies — the product reads P_{b-1} in place, nothing is
// packed — and the output strip rows the kernel writes; a row is L/nr copies of nr floats.
//
// Numerics: Â's rows are Rollout's float64 rows rounded to float32 (the AVX-512 rows: within
// E*2^-24 relative of them, E = 24M + 2H + 17, M the largest |score|; rolloutcols.go); every
// entry of the product is ONE float32 chain over k = 0..L-1 in order (one rounding per step
// on the FMA kernels, two on the generic loop), carried exactly between k-blocks, so its bits
// depend only on its row of Â and its column of P_{b-1}: not on taskRows, rtDepth, the strip
// width, the task order or the thread count (bit-identical for any GOMAXPROCS; FMA6x32's
// product has FMA6x16's bits). All terms are non-negative, so an entry is within about
// (b+1)*(L+2+E)*2^-24 relative of Rollout's float64 value (E = 0 on the float64 rows): the
// test's bound; measured under 50 x 2^-24 on the tests' pages. The whole-image rows are
// float64 column sums of the float32 product, in row order.
//
// Invariant: row q of the table after block b is Rollout(q, b): each block multiplies the
// product on the LEFT, P_b = Â_b · P_{b-1}. The mutation that would silently break it:
// P_b = P_{b-1} · Â_b (the new block on the right): every row is still a probability row
// over its segment and looks like a rollout — of the blocks in reverse order.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/internal/par"
)

// Product tiling (BenchmarkTableProduct*): a task is taskRows query rows (a multiple of 96:
// of the kernel's 6 rows and of the AVX-512 rows' 32 lanes) times every column; it runs
// k-blocks of rtDepth outermost, the strips inside, its 6-row tiles innermost, so one strip's
// k-block of P_{b-1} (rtDepth*nr float32, 32 KiB at 32 lanes) stays in L1 while every tile of
// the task passes it, and the task's Â rows of one k-block (at most rtMaxRows*rtDepth float32,
// 384 KiB) stay in L2 across the strips. Each task reads all of P_{b-1} once (105 MB at 5,120),
// so rows are as many as leave 8 tasks per worker, up to rtMaxRows. Measured at 5,120 in GFLOP
// per CPU second, medians of 4 interleaved runs on the shared 2-core Xeon: 96 rows x 256
// deep 97, 384 x 256 102, 192 x 512 106, 384 x 512 108 (spread ±12% each); 256 deep keeps
// the tests' 308-patch segment past one k-block. None of it can change the bits.
const (
	rtRows    = 96  // the least rows of a task, and their multiple
	rtMaxRows = 384 // the most
	rtDepth   = 256
	rtMR      = 6 // the kernel's x rows
)

// taskRows is the rows of one fold task over a segment of L on threads goroutines: as many
// multiples of rtRows as leave 8 tasks per goroutine, within [rtRows, rtMaxRows].
func taskRows(L, threads int) int {
	per := (L + 8*threads - 1) / (8 * threads)
	return min(rtMaxRows, max(rtRows, (per+rtRows-1)/rtRows*rtRows))
}

// workers is how many goroutines a fold runs n tasks on.
func (t *RolloutTable) workers(n int) int { return min(t.threads, par.Workers(n)) }

// ErrRowNotKept says a table does not hold the product up to the block asked for (not folded
// in yet, or an earlier block whose product the history budget did not keep).
var ErrRowNotKept = errors.New("rollout table: block not kept")

// TableOptions make a RolloutTable.
type TableOptions struct {
	Rollout RolloutOptions // head fusion and discard ratio, as Rollout takes them
	// Segments the table covers (each a segment of the page, no repeats); nil: every segment.
	Segments []backend.Segment
	// History is how many bytes the table may spend on the products of blocks before the last
	// (what RowAt reads); the most recent that fit are kept. 0: the last block's alone.
	History int64
	// Threads caps the goroutines a fold runs on (0: GOMAXPROCS), e.g. to leave cores to a
	// run in progress. It never changes a bit of the result.
	Threads int
}

// RolloutTable is the attention rollout of every query of some segments of a page, for one
// head fusion and discard ratio, up to the last block folded in (Extend, Build). Rows and
// the whole-image rollout may be read at any time from any goroutine, also while a block is
// being folded in: a reader gets the state before or after that block, never a mix. One
// fold runs at a time (a second Extend or Build waits for the first). It reads the Store's
// kept q|k only while folding; it holds its products (Bytes).
type RolloutTable struct {
	s       *Store
	opts    RolloutOptions
	parts   []tablePart
	nr      int  // lanes per product strip: 32 for FMA6x32, 16 for FMA6x16 and the generic loop
	fma     bool // the product through an assembly kernel (kernel.UseFMA when made)
	history int64
	threads int // the most goroutines of a fold

	build    sync.Mutex   // one fold at a time
	rowsDone atomic.Int64 // progress of the fold in progress: rows done of rowsAll
	rowsAll  atomic.Int64
	scratchB atomic.Int64 // bytes held by the fold in progress, besides the kept products
	step     func()       // tests: called at every point where a task checks its context

	mu     sync.RWMutex
	blocks int            // blocks folded in: cur is P_{blocks-1}
	cur    [][]float32    // per part, strip layout
	hist   []tableProduct // earlier products kept, oldest first
	wholes [][]float32    // per block folded in: Whole's row, [S]
}

// tablePart is one segment of a table.
type tablePart struct {
	seg       backend.Segment
	L, strips int
}

// tableProduct is a kept product of an earlier block.
type tableProduct struct {
	upTo int
	p    [][]float32
}

// NewRolloutTable is an empty table (no block folded in) for the options o. It checks the
// options and that every segment's product fits the fused-matrix bound (L*L float32 within
// 1 GiB, L up to 16,384).
func (s *Store) NewRolloutTable(o TableOptions) (*RolloutTable, error) {
	if err := o.Rollout.check(); err != nil {
		return nil, err
	}
	if o.History < 0 || o.Threads < 0 {
		return nil, fmt.Errorf("rollout table: history of %d bytes, %d threads", o.History, o.Threads)
	}
	segs := o.Segments
	if segs == nil {
		segs = s.Layout.Segments
	}
	t := &RolloutTable{s: s, opts: o.Rollout, nr: keyStrip, fma: kernel.UseFMA, history: o.History, threads: o.Threads}
	if t.threads == 0 {
		t.threads = runtime.GOMAXPROCS(0)
	}
	if kernel.UseAVX512 {
		t.nr = 2 * keyStrip
	}
	for i, g := range segs {
		if err := s.checkFrame(g); err != nil {
			return nil, err
		}
		if slices.Contains(segs[:i], g) {
			return nil, fmt.Errorf("rollout table: segment %v listed twice", g)
		}
		L := g.End - g.Start
		if err := checkFusedSize(L); err != nil {
			return nil, fmt.Errorf("rollout table: %w", err)
		}
		t.parts = append(t.parts, tablePart{seg: g, L: L, strips: (L + t.nr - 1) / t.nr})
	}
	return t, nil
}

// Options are the table's head fusion and discard ratio.
func (t *RolloutTable) Options() RolloutOptions { return t.opts }

// Segments are the segments the table covers.
func (t *RolloutTable) Segments() []backend.Segment {
	out := make([]backend.Segment, len(t.parts))
	for i, p := range t.parts {
		out[i] = p.seg
	}
	return out
}

// Blocks is how many blocks are folded in: rows are up to block Blocks()-1.
func (t *RolloutTable) Blocks() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.blocks
}

// Progress is how many blocks are folded in and, while one more is being folded in, the share
// of its work done (0 when idle).
func (t *RolloutTable) Progress() (blocks int, frac float64) {
	blocks = t.Blocks()
	if all := t.rowsAll.Load(); all > 0 {
		frac = float64(t.rowsDone.Load()) / float64(all)
	}
	return blocks, frac
}

// Extend folds in block, the next one (block == Blocks()); a block already folded in is a
// no-op. It needs the block's attention kept. A done ctx stops it within ~20 ms at 5,120
// patches (~90 with a discard); it then returns ctx.Err() and the table is as it was (block
// not folded in).
func (t *RolloutTable) Extend(ctx context.Context, block int) error {
	t.build.Lock()
	defer t.build.Unlock()
	n := t.Blocks()
	if block < n {
		return nil
	}
	if block > n {
		return fmt.Errorf("rollout table: block %d is next, not %d", n, block)
	}
	if kept := t.s.KeptQK(); block >= kept {
		return fmt.Errorf("rollout table: block %d: %d blocks have attention kept", block, kept)
	}
	_, err := t.fold(ctx, block, nil)
	return err
}

// Build folds in every block from Blocks() up to upTo in order (none if they are in),
// calling progress(done, of) (if not nil) after each with done the blocks folded in and
// of = upTo+1; progress runs on Build's goroutine during the fold and must not call Extend or
// Build (Row, Whole, Progress and the rest are fine). It needs attention kept up to upTo. A
// done ctx stops it as it stops Extend and returns ctx.Err(); the blocks folded in before
// stay.
func (t *RolloutTable) Build(ctx context.Context, upTo int, progress func(done, of int)) error {
	t.build.Lock()
	defer t.build.Unlock()
	if kept := t.s.KeptQK(); upTo >= kept {
		return fmt.Errorf("rollout table up to block %d: %d blocks have attention kept", upTo, kept)
	}
	var spare [][]float32
	for b := t.Blocks(); b <= upTo; b++ {
		var err error
		if spare, err = t.fold(ctx, b, spare); err != nil {
			return err
		}
		if progress != nil {
			progress(b+1, upTo+1)
		}
	}
	return nil
}

// partBytes is the bytes of one product of a segment of L patches in strips of nr.
func partBytes(L, nr int) int64 { return int64((L+nr-1)/nr*nr) * int64(L) * 4 }

// productBytes is the bytes of one product of every part.
func (t *RolloutTable) productBytes() int64 {
	var n int64
	for _, p := range t.parts {
		n += partBytes(p.L, t.nr)
	}
	return n
}

// foldScratch is the bytes a fold of a segment of L patches holds besides the products: the
// block's packed keys (every head), each worker's Â rows and score rows, and with a discard
// the block's fused matrix.
func foldScratch(L, hidden, workers int, discard bool) int64 {
	n := int64(padded(L))*int64(hidden)*4 +
		int64(workers)*(int64(taskRows(L, workers))*int64(L)*4+int64(qTile)*int64(L)*16+int64(qTile)*int64(padded(L))*4+2*int64(colLanes)*int64(L)*4)
	if discard {
		n += int64(L) * int64(L) * 4
	}
	return n
}

// RolloutTableBytes is what a table over segments of the given lengths, in a tower of
// hidden = heads*head_dim, holds for o: idle, the last product and the whole-image rows of
// blocks blocks (plus whatever History allows); building, at most that plus the next
// product and a fold's scratch (foldScratch) on GOMAXPROCS goroutines (fewer with Threads).
func RolloutTableBytes(o RolloutOptions, hidden, blocks int, lens ...int) (idle, building int64) {
	nr := keyStrip
	if kernel.UseAVX512 {
		nr = 2 * keyStrip
	}
	var prod, scratch, rows int64
	for _, L := range lens {
		prod += partBytes(L, nr)
		w := par.Workers(1 << 30)
		scratch = max(scratch, foldScratch(L, hidden, min(w, (L+taskRows(L, w)-1)/taskRows(L, w)), o.dropCount(L) > 0))
		rows += int64(L)
	}
	idle = prod + int64(blocks)*rows*4
	return idle, idle + prod + scratch
}

// Bytes is what the table holds now: its products (the last and the history kept), the
// whole-image rows, and while a block is being folded in the next product and the fold's
// scratch.
func (t *RolloutTable) Bytes() int64 {
	t.mu.RLock()
	n := int64(0)
	if t.cur != nil {
		n += t.productBytes()
	}
	n += int64(len(t.hist)) * t.productBytes()
	for _, w := range t.wholes {
		n += int64(len(w)) * 4
	}
	t.mu.RUnlock()
	return n + t.scratchB.Load()
}

// fold folds in block (the next one): every part's next product from the current one (into
// spare's buffers when given), the whole-image row, then published under the lock. It returns
// buffers the next fold may write into.
func (t *RolloutTable) fold(ctx context.Context, block int, spare [][]float32) ([][]float32, error) {
	var all int64 // rows to do: each part's product, and its fused matrix first with a discard
	for _, p := range t.parts {
		all += int64(p.L)
		if t.opts.dropCount(p.L) > 0 {
			all += int64(p.L)
		}
	}
	t.rowsDone.Store(0)
	t.rowsAll.Store(all)
	defer t.rowsAll.Store(0)
	t.mu.RLock()
	prev := t.cur
	t.mu.RUnlock()
	next := spare
	if next == nil {
		next = make([][]float32, len(t.parts))
		for i, p := range t.parts {
			next[i] = make([]float32, p.strips*t.nr*p.L)
		}
	}
	var scratch int64 // the next product, and the largest part's fold
	for _, p := range t.parts {
		rows := taskRows(p.L, t.threads)
		scratch = max(scratch, foldScratch(p.L, t.s.Hidden, t.workers((p.L+rows-1)/rows), t.opts.dropCount(p.L) > 0))
	}
	t.scratchB.Store(t.productBytes() + scratch)
	defer t.scratchB.Store(0)
	for i, p := range t.parts {
		var pp []float32
		if prev != nil {
			pp = prev[i]
		}
		if err := t.foldPart(ctx, block, p, pp, next[i]); err != nil {
			return next, err
		}
	}
	whole := make([]float32, t.s.Layout.Rows())
	for i, p := range t.parts {
		t.wholeRow(p, next[i], whole)
	}
	t.mu.Lock()
	old := t.cur
	t.cur, t.blocks = next, block+1
	t.wholes = append(t.wholes, whole)
	if old != nil && t.history >= t.productBytes() {
		t.hist = append(t.hist, tableProduct{upTo: block - 1, p: old})
		old = nil
		for int64(len(t.hist))*t.productBytes() > t.history {
			old = t.hist[0].p
			t.hist = slices.Delete(t.hist, 0, 1)
		}
	}
	t.mu.Unlock()
	return old, nil
}

// foldScr is one worker's buffers in a fold: score rows (or tiles, rolloutcols.go) and Â
// rows (taskRows x L).
type foldScr struct {
	sc    *scratch
	cols  *colScratch
	a     []float32
	frame []float64 // a windowed block's row over the whole frame (L)
}

// foldPart writes into next the product Â_block · prev over part's segment (Â_block itself
// for block 0, prev nil).
func (t *RolloutTable) foldPart(ctx context.Context, block int, part tablePart, prev, next []float32) error {
	seg, L := part.seg, part.L
	k := t.opts.dropCount(L)
	segs := t.s.segmentsIn(block, seg) // the frame, or a windowed block's windows in it
	windowed := len(segs) > 1
	cols := t.nr == colLanes && k == 0 && !windowed // the AVX-512 rows (rolloutcols.go): keys not packed
	var ab attnBlock
	var err error
	if cols {
		ab, err = t.s.attnBlockBare(block)
	} else {
		ab, err = t.s.attnBlock(block, segs...)
	}
	if err != nil {
		return err
	}
	var keys []float32
	if cols {
		keys = ab.colKeys(seg, t.threads)
	}
	var d *dropped
	if k > 0 {
		f := make([]float32, L*L)
		err := ab.fusedFrameInto(ctx, segs, seg, -1, t.opts.Fusion, f, t.threads, func(rows int) { t.rowsDone.Add(int64(rows)) })
		if err != nil {
			return err
		}
		ab = attnBlock{} // the keys are not needed any more
		d = newDropped(f, k)
	}
	done := ctx.Done()
	rows := taskRows(L, t.threads)
	tasks := (L + rows - 1) / rows
	workers := t.workers(tasks)
	scr := make([]*foldScr, workers)
	err = par.For(ctx, tasks, workers, func(w, ti int) {
		if scr[w] == nil {
			scr[w] = &foldScr{a: make([]float32, rows*L)}
			if cols {
				scr[w].cols = newColScratch(L, ab.hd)
			} else {
				scr[w].sc = newScratch(L)
				scr[w].frame = make([]float64, L)
			}
		}
		sc := scr[w]
		r0, r1 := ti*rows, min(L, (ti+1)*rows)
		qs := make([]int, 0, qTile)
		for i := r0; i < r1 && cols; i += colLanes {
			if t.stopped(done) {
				return
			}
			nq := min(colLanes, r1-i)
			ab.fusedCols(sc.cols, seg, keys, seg.Start+i, nq, t.opts.Fusion)
			for c := range nq {
				hatRow(sc.cols.gather(c, L), i+c, sc.a[(i+c-r0)*L:][:L])
			}
		}
		for i := r0; i < r1 && !cols; i += qTile {
			if t.stopped(done) {
				return
			}
			qs = qs[:0]
			for q := i; q < min(r1, i+qTile); q++ {
				qs = append(qs, seg.Start+q)
			}
			if d == nil && windowed {
				ab.windowHatRows(sc, qs, segs, seg, t.opts.Fusion, r0)
				continue
			}
			if d == nil {
				ab.fusedRows(sc.sc, qs, seg, -1, t.opts.Fusion)
			}
			for a := range qs {
				m := row(sc.sc.m, a, L)
				if d != nil {
					d.row(i+a, L, m)
				}
				hatRow(m, i+a, sc.a[(i+a-r0)*L:][:L])
			}
		}
		if prev == nil {
			t.scatterRows(sc.a, part, r0, r1, next)
		} else if !t.product(done, sc.a, part, r0, r1, prev, next) {
			return
		}
		t.rowsDone.Add(int64(r1 - r0))
	})
	if err == nil {
		err = ctx.Err() // a task that stopped part way leaves par.For none the wiser
	}
	return err
}

// windowHatRows writes the Â rows of queries qs (increasing, inside frame seg) of a windowed
// block into sc.a (rows from r0): each query's fused row over its window (one of segs), +0
// over the rest of the frame.
func (ab *attnBlock) windowHatRows(sc *foldScr, qs []int, segs []backend.Segment, seg backend.Segment, f Fusion, r0 int) {
	L := seg.End - seg.Start
	eachSegmentRun(segs, qs, func(w backend.Segment, run []int) {
		ab.fusedRows(sc.sc, run, w, -1, f)
		Lw := w.End - w.Start
		for a, q := range run {
			clear(sc.frame)
			copy(sc.frame[w.Start-seg.Start:], row(sc.sc.m, a, Lw))
			i := q - seg.Start
			hatRow(sc.frame, i, sc.a[(i-r0)*L:][:L])
		}
	})
}

// hatRow writes row i of Â (float32) from m, row i of the fused (and dropped) attention:
// Â[i, :] = (0.5*m + 0.5*e_i) / (0.5*sum(m) + 0.5), in float64 as addHatRow weighs it.
func hatRow(m []float64, i int, dst []float32) {
	var sum float64
	for _, x := range m {
		sum += x
	}
	hw := 0.5 * (1 / (0.5*sum + 0.5))
	for j, x := range m {
		dst[j] = float32(hw * x)
	}
	dst[i] = float32(hw*m[i] + hw)
}

// stopped says whether done is closed (never, for nil).
func (t *RolloutTable) stopped(done <-chan struct{}) bool {
	if t.step != nil {
		t.step()
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// scatterRows writes rows r0..r1-1 of a (rows of L, from r0) into the strip layout of next.
func (t *RolloutTable) scatterRows(a []float32, part tablePart, r0, r1 int, next []float32) {
	L, nr := part.L, t.nr
	for i := r0; i < r1; i++ {
		src := a[(i-r0)*L:][:L]
		for s := range part.strips {
			dst := next[s*L*nr+i*nr:][:nr]
			n := copy(dst, src[s*nr:])
			clear(dst[n:])
		}
	}
}

// product writes rows r0..r1-1 of a · prev into next (strip layout), a holding rows r0..r1-1
// of Â (rows of L). It returns false when done closed part way.
func (t *RolloutTable) product(done <-chan struct{}, a []float32, part tablePart, r0, r1 int, prev, next []float32) bool {
	L, nr := part.L, t.nr
	var xp, yp [rtMR]unsafe.Pointer
	for k0 := 0; k0 < L; k0 += rtDepth {
		if t.stopped(done) {
			return false
		}
		kn := min(rtDepth, L-k0)
		carry := 0
		if k0 > 0 {
			carry = 1
		}
		for s := range part.strips {
			base := s * L * nr
			wp := f32Ptr(prev, base+k0*nr, kn*nr)
			for r := r0; r < r1; r += rtMR {
				n := min(rtMR, r1-r)
				for x := range rtMR {
					ra := r + min(x, n-1) // a short tile repeats its last row
					xp[x] = f32Ptr(a, (ra-r0)*L+k0, kn)
					yp[x] = f32Ptr(next, base+ra*nr, nr)
				}
				switch {
				case nr == 2*keyStrip:
					kernel.FMA6x32(&xp, wp, kn, &yp, carry)
				case t.fma:
					kernel.FMA6x16(&xp, wp, kn, &yp, carry)
				default:
					stripGeneric(&xp, wp, kn, &yp, carry)
				}
			}
		}
	}
	return true
}

// stripGeneric is FMA6x16's contract without FMA: y[r][c] (+)= sum_k float32(x[r][k] *
// w[k*16+c]) for k = 0..n-1 in order, each product rounded, then the sum (kernel.Dot3x2's
// numerics), from +0 or from y (carry != 0). Every lane is loaded before any is stored, so
// repeated x and y pointers (a short tile) compute and store the same values.
func stripGeneric(x *[rtMR]unsafe.Pointer, w unsafe.Pointer, n int, y *[rtMR]unsafe.Pointer, carry int) {
	const nr = keyStrip
	var acc [rtMR][nr]float32
	if carry != 0 {
		for r := range rtMR {
			acc[r] = *(*[nr]float32)(y[r])
		}
	}
	ws := unsafe.Slice((*float32)(w), n*nr)
	for r := range rtMR {
		xs := unsafe.Slice((*float32)(x[r]), n)
		ar := &acc[r]
		for k, v := range xs {
			wk := (*[nr]float32)(ws[k*nr:])
			for c := range nr {
				ar[c] += float32(v * wk[c])
			}
		}
	}
	for r := range rtMR {
		*(*[nr]float32)(y[r]) = acc[r]
	}
}

// wholeRow writes the mean of the rows of p (part's product) into whole at part's segment:
// float64 sums in row order, a lane per column, strips on all cores.
func (t *RolloutTable) wholeRow(part tablePart, p []float32, whole []float32) {
	L, nr := part.L, t.nr
	out := whole[part.seg.Start:part.seg.End]
	par.Do(part.strips, t.workers(part.strips), func(_, s int) {
		acc := make([]float64, nr)
		for k := range L {
			for c, x := range p[s*L*nr+k*nr:][:nr] {
				acc[c] += float64(x)
			}
		}
		for c := range min(nr, L-s*nr) {
			out[s*nr+c] = float32(acc[c] / float64(L))
		}
	})
}

// partOf is the index of the part holding query, -1 if none.
func (t *RolloutTable) partOf(query int) int {
	for i, p := range t.parts {
		if query >= p.seg.Start && query < p.seg.End {
			return i
		}
	}
	return -1
}

// rowOf copies query's row out of part i's product p: [S], zero outside the segment.
func (t *RolloutTable) rowOf(i int, p []float32, query int) []float32 {
	part, nr := t.parts[i], t.nr
	L, q := part.L, query-part.seg.Start
	out := make([]float32, t.s.Layout.Rows())
	dst := out[part.seg.Start:part.seg.End]
	for s := range part.strips {
		copy(dst[s*nr:], p[s*L*nr+q*nr:][:nr])
	}
	return out
}

// Row is the rollout of query up to the last block folded in, and that block: Rollout(query,
// upTo) within float32 rounding (see the file comment), [S] in sequence order, zero outside
// the query's segment; a new slice. Before the first block is folded in, or for a query
// outside the table's segments, it is nil and -1. It copies one row (microseconds).
func (t *RolloutTable) Row(query int) (row []float32, upTo int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := t.partOf(query)
	if t.blocks == 0 || i < 0 {
		return nil, -1
	}
	return t.rowOf(i, t.cur[i], query), t.blocks - 1
}

// RowAt is the rollout of query up to block upTo, as Row gives it, when the table holds that
// block's product: the last block folded in, or an earlier one the History budget kept. Else
// an error that errors.Is ErrRowNotKept (the caller may fall back to Store.Rollout).
func (t *RolloutTable) RowAt(query, upTo int) ([]float32, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := t.partOf(query)
	if i < 0 {
		return nil, fmt.Errorf("rollout table: query %d is outside its segments %v", query, t.Segments())
	}
	if t.blocks > 0 && upTo == t.blocks-1 {
		return t.rowOf(i, t.cur[i], query), nil
	}
	for _, h := range t.hist {
		if h.upTo == upTo {
			return t.rowOf(i, h.p[i], query), nil
		}
	}
	return nil, fmt.Errorf("%w: rollout up to block %d (%d folded in, %d earlier kept)", ErrRowNotKept, upTo, t.blocks, len(t.hist))
}

// Whole is the whole-image rollout up to the last block folded in, and that block: for every
// patch j of a segment g the table covers, the mean over the queries q of g of
// Rollout(q, upTo)[j] — (1/L) sum_q P[q, j], the rollout of the segment's mean output — so
// each segment's part sums to 1; [S] in sequence order, zero outside the table's segments; a
// new slice. nil and -1 before the first block is folded in.
func (t *RolloutTable) Whole() (whole []float32, upTo int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.blocks == 0 {
		return nil, -1
	}
	return slices.Clone(t.wholes[t.blocks-1]), t.blocks - 1
}

// WholeAt is Whole up to block upTo, for any block folded in (the table keeps every block's).
func (t *RolloutTable) WholeAt(upTo int) ([]float32, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if upTo < 0 || upTo >= t.blocks {
		return nil, fmt.Errorf("%w: whole-image rollout up to block %d (%d folded in)", ErrRowNotKept, upTo, t.blocks)
	}
	return slices.Clone(t.wholes[upTo]), nil
}
