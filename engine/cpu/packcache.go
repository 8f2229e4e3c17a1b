// packcache.go: weights widened into the FMA panels once per pass, not once per call.
//
// The MLP half calls fc1 and fc2 once per row tile: at 5,120 patches and tile 512 that was ten
// widenings of each per block, and tile 256 was 24% slower than tile 512 at 1,024 patches for
// nothing but the re-widening. A packed weight is kept (fc1 and fc2 alternate) and
// reused by every call of the same pass; every row-block task of a call reads it instead of
// widening its panel itself. A call whose tasks would each widen a panel once anyway (one row
// block) packs nothing the first time the pass meets its weight (firstOfOneBlock). Three are
// kept: a gated MLP (Qwen2.5-VL) alternates gate, up and down, which two entries would evict
// in turn, each call a miss.
//
// Invariant: a cached panel is used only within the pass it was widened in: Commit forgets
// them all. A pass never sees its weights change (pread refills a slot only after the pass that
// read it has committed; a mapped file that changes under a run is a fault, not new weights),
// so within a pass the cache holds exactly the bytes the weight holds. The key names the
// weight by region, offset, name and dtype, so another block's weight read into the same pread
// slot (same region and offset) is another key.
// Mutation that would silently break it: keeping the cache across Commit: a pread slot refilled
// with the same block's bytes after the file was rewritten (or a Restart after a regenerated
// checkpoint) would run with the old widening (TestPackCacheForgetsAtCommit).
package cpu

import (
	"slices"
	"time"

	"github.com/turbospark/inspector/engine/dtype"
)

// packCacheMax bounds one cached weight (float32 elements): fc1/fc2 of the 27x1152 tower are
// 5.0M (20 MB); a merger's 4608 x 4608 (85 MB) is packed per task instead, as it is used once.
// A variable only so that tests can send weights down either path.
var packCacheMax = 8 << 20

type packKey struct {
	region, offset int
	name           string
	dt             dtype.DType
	nr, in, out    int
}

type packEntry struct {
	key    packKey
	valid  bool
	buf    []float32
	mapped bool   // buf is a mapping of its own (hugeAlloc), released by hugeFree
	used   uint64 // the call counter when last used: the older entry is replaced
}

// packedOffset is where panel p's k-block from k0 lies in a cached weight: fmaCols*in floats
// per panel, fmaCols*kn per k-block (its strips inside as packPanel lays them).
func packedOffset(p, k0, in int) int { return p*fmaCols*in + fmaCols*k0 }

// packedWeight returns job's weight widened into panels, from the cache or widened now (in
// parallel over panels and k-blocks), or nil when it is too large to keep.
func (b *Backend) packedWeight(job *mmJob) []float32 {
	panels, in := job.panels, job.in
	key := packKey{job.w.Region.ID, job.w.Offset, job.w.Name, job.w.DType, job.kern.nr, in, job.out}
	kblocks := chunks(in, fmaDepth)
	if b.firstOfOneBlock(job, key) {
		return nil
	}
	return b.cachedPack(key, panels*fmaCols*in, func(buf []float32) {
		b.growScratch(min(in, fmaDepth))
		b.parallel(panels*kblocks, func(wk, t int) {
			p, k0 := t/kblocks, t%kblocks*fmaDepth
			kn := min(fmaDepth, in-k0)
			c0 := p * fmaCols
			c1 := min(c0+fmaCols, job.out)
			strips := chunks(c1-c0, job.kern.nr)
			packPanel(buf[packedOffset(p, k0, in):][:strips*job.kern.nr*kn], b.scratch[wk][:kn], job.kern.nr, job, c0, c1, k0)
		})
	})
}

// firstOfOneBlock says whether the pass meets job's weight for the first time in a call of
// one row block (rowBlock, unpacked): each panel is then used by one task only, which widens
// it in its own scratch while it is in L1 (taskFMA), so packing the whole weight for the pass
// first would only write it out to memory and read it back. The pass packs it when it calls
// the weight again (an MLP cut into row tiles). 8B tower, 1,024 patches, 2 threads, AMD Zen 5
// VM, three interleaved pairs: block 0.118-0.125 s against 0.127-0.145 (the pack's 14-18 ms a
// block gone, the products 0-6 ms slower); 5,120 patches unchanged (0.09-0.11 s a block either
// way: its qkv and proj take 5 row blocks, its MLP tiles the cache from the second on).
func (b *Backend) firstOfOneBlock(job *mmJob, key packKey) bool {
	if chunks(job.rows, rowBlock(job.rows, job.panels, b.threads, false)) > 1 || slices.Contains(b.packSeen, key) {
		return false
	}
	b.packSeen = append(b.packSeen, key)
	return true
}

// cachedPack returns the n float32 that fill wrote for key in this pass: from the cache, or
// filled now into the least recently used entry; nil when n is too large to keep or the fill
// was cancelled.
func (b *Backend) cachedPack(key packKey, n int, fill func(buf []float32)) []float32 {
	if n > packCacheMax {
		return nil
	}
	b.packCalls++
	for i := range b.packs {
		if e := &b.packs[i]; e.valid && e.key == key {
			e.used = b.packCalls
			return e.buf[:n]
		}
	}
	e := &b.packs[0] // the least recently used entry
	for i := range b.packs {
		if b.packs[i].used < e.used {
			e = &b.packs[i]
		}
	}
	if cap(e.buf) < n {
		hugeFree(e.buf, e.mapped)
		e.buf, e.mapped = hugeAlloc(n)
	}
	e.valid = false
	buf := e.buf[:n]
	b.timePack(fill, buf)
	if b.ctx.Err() != nil { // cancelled part way: not a whole widening (the call stops too)
		return nil
	}
	e.key, e.valid, e.used = key, true, b.packCalls
	return buf
}

// timePack runs fill(buf), adding its time to the backend's packing time (TakePackTime).
func (b *Backend) timePack(fill func(buf []float32), buf []float32) {
	start := time.Now()
	fill(buf)
	b.packTime += time.Since(start)
}

// TakePackTime returns the time MatMul spent packing weights (widening them into panels or
// AMX tiles) since the last call, and starts again from zero: the op timer (engine/tower/optimer.go)
// shows it apart from the products, which it is part of. A weight widened per task (a
// merger's on the FMA path, or the first one-row-block call of a pass: firstOfOneBlock) is not
// counted: its widening is interleaved with its products.
func (b *Backend) TakePackTime() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.packTime
	b.packTime = 0
	return d
}

// freePacks releases the cache's memory (Close).
func (b *Backend) freePacks() {
	for i := range b.packs {
		hugeFree(b.packs[i].buf, b.packs[i].mapped)
		b.packs[i] = packEntry{}
	}
}

// forgetPacks drops every cached widening (Commit: the pass is over).
func (b *Backend) forgetPacks() {
	b.packSeen = b.packSeen[:0]
	for i := range b.packs {
		b.packs[i].valid = false
	}
}
