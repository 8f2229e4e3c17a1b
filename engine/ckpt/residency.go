package ckpt

// residency.go keeps the vision weights in host memory in one of two modes (DESIGN.md):
//   mapped: each shard's vision span is mmapped read-only; weights are views into it.
//   pread:  each block's twelve weights are pread into a page-aligned slot; a ring of slots
//           lets block i+1 stream in while block i computes.
//
// Invariant: a slot is never refilled while the block in it is in use (between Block(i) and
// Done(i)), and both modes hand the graph the same bytes, so outputs are bit-identical.
// The mutation that would silently break it: prefetching into the slot of the block being
// computed (a ring of one) — the block would read half of the next block's weights.

import (
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/internal/fsx"
)

// ResidencyMode selects how block weights are held.
type ResidencyMode string

const (
	Mapped ResidencyMode = "mapped"
	Pread  ResidencyMode = "pread"
)

// ParseResidency accepts "mapped" or "pread".
func ParseResidency(s string) (ResidencyMode, error) {
	switch ResidencyMode(s) {
	case Mapped, Pread:
		return ResidencyMode(s), nil
	}
	return "", fmt.Errorf("residency %q: want mapped or pread", s)
}

// WeightFetch is what getting a block's weights cost.
type WeightFetch struct {
	Wait      time.Duration // time the compute waited for the weights (the stall)
	BytesRead int64         // bytes pread for this block (0 when mapped)
}

// Residency hands out weights.
type Residency interface {
	Mode() ResidencyMode
	Global(name string) backend.Weight // patch/pos embeddings
	// Merger returns the six weights of the merger named by prefix (Config.MergerPrefixes),
	// reading them first where they are not resident (pread: one merger at a time).
	Merger(prefix string) (MergerWeights, WeightFetch, error)
	// Block blocks until block i's weights are resident and marks them in use.
	Block(i int) (*BlockWeights, WeightFetch, error)
	// Done releases block i: its slot may be refilled.
	Done(i int)
	// FileAt names the file mapped at addr ("" when none is: pread holds copies).
	FileAt(addr uintptr) string
	// Shrunk names a mapped file now shorter than its mapping ("" when none is): where a
	// fault comes without its address (qemu-user gives none), the files are asked instead.
	Shrunk() string
	Close() error
}

// EmbedWeights are the embedding's weights from res: the bias and the table zero Weights
// (nil Region) where the family has none, which MatMul reads as "no bias" and the embedding
// as "no table", never a lookup of a name the checkpoint need not hold.
func EmbedWeights(c model.Config, res Residency) (patch, bias, pos backend.Weight) {
	patch = res.Global(model.PatchWeightName)
	if c.HasPatchBias() {
		bias = res.Global(model.PatchBiasName)
	}
	if c.HasPosEmbed() {
		pos = res.Global(model.PosEmbedName)
	}
	return patch, bias, pos
}

// NewResidency opens the checkpoint's weights in the given mode; slots is the pread ring
// size (at least 2).
func NewResidency(ck *Checkpoint, mode ResidencyMode, slots int) (Residency, error) {
	switch mode {
	case Mapped:
		return newMapped(ck)
	case Pread:
		return newPread(ck, slots)
	}
	return nil, fmt.Errorf("residency %q: want mapped or pread", mode)
}

// ---- mapped ----

type mappedRes struct {
	ck      *Checkpoint
	regions map[string]*backend.Region // shard path -> mapping of its vision span
	bases   map[string]int64           // shard path -> file offset of the mapping's first byte
	ends    map[string]int64           // shard path -> the file size the mapping needs
	blocks  []BlockWeights
	mu      sync.Mutex     // Block's prefault handover
	ahead   sync.WaitGroup // the prefault running: of block 0 from the open, then of the block after the one last handed out
}

func newMapped(ck *Checkpoint) (*mappedRes, error) {
	m := &mappedRes{ck: ck, regions: map[string]*backend.Region{}, bases: map[string]int64{}, ends: map[string]int64{}}
	for path, s := range ck.visionSpans() {
		if err := m.mapSpan(path, s[0], s[1]); err != nil {
			m.Close()
			return nil, err
		}
	}
	m.blocks = make([]BlockWeights, ck.Config.Depth)
	for i := range m.blocks {
		for _, spec := range ck.Config.BlockTensors(i) {
			m.blocks[i][spec.Role] = m.weight(spec.Name)
		}
	}
	if len(m.blocks) > 0 {
		m.prefault(m.blocks[0][:]) // while the run embeds the patches
	}
	return m, nil
}

// visionSpans is, per shard, the file offsets from the first vision tensor's first byte to
// the last one's end: what the mapped residency maps.
func (ck *Checkpoint) visionSpans() map[string][2]int64 {
	spans := map[string][2]int64{}
	for _, l := range ck.tensors {
		s, ok := spans[l.File.Path]
		if !ok {
			s = [2]int64{l.Info.Begin, l.Info.End}
		}
		s[0], s[1] = min(s[0], l.Info.Begin), max(s[1], l.Info.End)
		spans[l.File.Path] = s
	}
	return spans
}

// mappingBytes is the address space the mapped residency takes: each span from its first
// page.
func (ck *Checkpoint) mappingBytes() int64 {
	var n int64
	for _, s := range ck.visionSpans() {
		n += s[1] - s[0]/pageSize()*pageSize()
	}
	return n
}

// Resident is what a residency of mode with slots pread slots holds of the weights, and the
// address space it takes: mapped, every vision byte and each shard's vision span whole from
// its first page; pread, the slots (each the largest block), the embeddings and one merger.
func (ck *Checkpoint) Resident(mode ResidencyMode, slots int) (weights, mapping int64) {
	if mode != Pread {
		return ck.VisionBytes(), ck.mappingBytes()
	}
	c := ck.Config
	var block int64
	for i := range c.Depth {
		block = max(block, ck.tensorBytes(c.BlockTensors(i)))
	}
	var merger int64
	for _, prefix := range c.MergerPrefixes() {
		merger = max(merger, ck.tensorBytes(c.MergerTensors(prefix)))
	}
	weights = int64(max(slots, 2))*block + ck.tensorBytes(c.EmbedTensors()) + merger // the slots, the embeddings, one merger
	return weights, weights
}

// mapSpan maps only the bytes of the vision tensors (page-aligned down), not the whole shard.
func (m *mappedRes) mapSpan(path string, begin, end int64) error {
	f, err := fsx.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	base := begin / pageSize() * pageSize()
	data, err := unix.Mmap(int(f.Fd()), base, int(end-base), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("%s: mmap of bytes %d-%d: %v", path, base, end, err)
	}
	m.regions[path] = newRegion(data, true)
	m.bases[path], m.ends[path] = base, end
	return nil
}

func (m *mappedRes) weight(name string) backend.Weight {
	l := m.ck.tensors[name]
	return backend.Weight{Name: m.ck.Prefix + name, DType: l.Info.DType, Shape: l.Info.Shape,
		Region: m.regions[l.File.Path], Offset: int(l.Info.Begin - m.bases[l.File.Path])}
}

func (m *mappedRes) Mode() ResidencyMode { return Mapped }

// FileAt names the shard whose mapping holds addr.
func (m *mappedRes) FileAt(addr uintptr) string {
	for path, r := range m.regions {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(r.Bytes)))
		if addr >= base && addr < base+uintptr(cap(r.Bytes)) {
			return path
		}
	}
	return ""
}

// Shrunk names a shard that is now shorter than the bytes mapped from it.
func (m *mappedRes) Shrunk() string {
	for path, end := range m.ends {
		if st, err := os.Stat(path); err != nil || st.Size() < end {
			return path
		}
	}
	return ""
}

func (m *mappedRes) Global(name string) backend.Weight { return m.weight(name) }

func (m *mappedRes) Merger(prefix string) (MergerWeights, WeightFetch, error) {
	return mergerWeightsOf(m.merger(prefix)), WeightFetch{}, nil
}

// merger is the views of the merger named by prefix, by role.
func (m *mappedRes) merger(prefix string) (w [6]backend.Weight) {
	for _, spec := range m.ck.Config.MergerTensors(prefix) {
		w[spec.Role] = m.weight(spec.Name)
	}
	return w
}

// mergerWeightsOf names a merger's six weights, in Config.MergerTensors order.
func mergerWeightsOf(w [6]backend.Weight) MergerWeights {
	return MergerWeights{NormW: w[0], NormB: w[1], FC1W: w[2], FC1B: w[3], FC2W: w[4], FC2B: w[5]}
}
func (m *mappedRes) Done(int) {}

// Block hands out block i's views and maps block i+1's pages in the background while block i
// computes (prefault), so that its products do not fault page by page on every thread. It
// first lets the prefault in flight finish (block i's own, when the blocks run in order), and
// says how long that took as the wait for the weights.
func (m *mappedRes) Block(i int) (*BlockWeights, WeightFetch, error) {
	if i < 0 || i >= len(m.blocks) {
		return nil, WeightFetch{}, fmt.Errorf("block %d outside 0..%d", i, len(m.blocks)-1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	start := time.Now()
	m.ahead.Wait() // one prefault at a time
	wait := time.Since(start)
	m.prefault(m.after(i))
	return &m.blocks[i], WeightFetch{Wait: wait}, nil
}

// after lists the weights that run after block i: a deepstack merger that follows it (the
// run's deepstackAfter), then block i+1, or the final merger after the last block.
func (m *mappedRes) after(i int) []backend.Weight {
	var next []backend.Weight
	for k, d := range m.ck.Config.Deepstack {
		if d == i {
			w := m.merger(model.DeepstackPrefix(k))
			next = append(next, w[:]...)
		}
	}
	if i == len(m.blocks)-1 {
		w := m.merger("merger.")
		return append(next, w[:]...)
	}
	return append(next, m.blocks[i+1][:]...)
}

// prefault maps the pages of ws on a goroutine of its own (m.ahead; no other running).
func (m *mappedRes) prefault(ws []backend.Weight) {
	m.ahead.Go(func() {
		for _, w := range ws {
			if w.Region != nil {
				prefaultSpan(pageSpan(w))
			}
		}
	})
}

// prefaultSpan is prefault; a variable so that a test can see what is mapped ahead (the
// kernel maps pages around the ones asked for, so pages alone cannot tell which were).
var prefaultSpan = prefault

// pageSpan is w's bytes in its region from the page that holds its first byte (madvise wants
// a page-aligned start).
func pageSpan(w backend.Weight) []byte {
	start := int64(w.Offset) / pageSize() * pageSize()
	return w.Region.Bytes[start : w.Offset+len(w.Bytes())]
}

func (m *mappedRes) Close() error {
	m.mu.Lock()
	m.ahead.Wait() // no prefault runs on a mapping being unmapped
	m.mu.Unlock()
	for path, r := range m.regions {
		unix.Munmap(r.Bytes)
		delete(m.regions, path)
	}
	return nil
}

// ---- pread ----

// slotAlign keeps every weight in a slot at an offset a GPU can bind directly.
const slotAlign = 256

type slotState int

const (
	slotEmpty slotState = iota
	slotLoading
	slotReady
	slotInUse
)

type slot struct {
	region *backend.Region
	block  int
	state  slotState
	err    error
	w      BlockWeights
}

type preadRes struct {
	ck      *Checkpoint
	files   map[string]*os.File
	globals map[string]backend.Weight
	global  *backend.Region
	// One merger at a time: the deepstack mergers run after their blocks and the final one
	// at the end, so the region (sized for the largest) is refilled when another is asked
	// for, instead of all of them being held for the whole run (320 MB of the 8B's peak).
	merger       *backend.Region
	mergerPrefix string
	mergerW      MergerWeights

	mu    sync.Mutex
	cond  *sync.Cond
	slots []*slot
	wg    sync.WaitGroup
	last  map[int]int64
}

func newPread(ck *Checkpoint, nslots int) (*preadRes, error) {
	if nslots < 2 {
		nslots = 2
	}
	p := &preadRes{ck: ck, files: map[string]*os.File{}, globals: map[string]backend.Weight{}, last: map[int]int64{}}
	p.cond = sync.NewCond(&p.mu)
	for _, sh := range ck.Shards {
		f, err := fsx.OpenRegular(sh.Path)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.files[sh.Path] = f
	}
	if err := p.loadGlobals(); err != nil {
		p.Close()
		return nil, err
	}
	var slotBytes int64
	for i := 0; i < ck.Config.Depth; i++ {
		slotBytes = max(slotBytes, p.layoutBytes(ck.Config.BlockTensors(i)))
	}
	for k := 0; k < nslots; k++ {
		mem, err := pageAlloc(slotBytes)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("pread slot of %d bytes: %v", slotBytes, err)
		}
		p.slots = append(p.slots, &slot{region: newRegion(mem, false), block: -1})
	}
	return p, nil
}

// pageAlloc returns page-aligned anonymous memory outside the Go heap (a GPU can wrap it).
func pageAlloc(n int64) ([]byte, error) {
	return unix.Mmap(-1, 0, int(alignUp(max(n, 1), pageSize())), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
}

func (p *preadRes) layoutBytes(specs []model.TensorSpec) int64 {
	var off int64
	for _, s := range specs {
		off = alignUp(off, slotAlign) + p.ck.tensors[s.Name].Bytes()
	}
	return off
}

// fill preads specs into region in layout order and returns their weights and bytes read.
func (p *preadRes) fill(region *backend.Region, specs []model.TensorSpec, out []backend.Weight) (int64, error) {
	var off int64
	for _, s := range specs {
		l := p.ck.tensors[s.Name]
		off = alignUp(off, slotAlign)
		n := l.Bytes()
		if _, err := p.files[l.File.Path].ReadAt(region.Bytes[off:off+n], l.Info.Begin); err != nil {
			return 0, fmt.Errorf("%s: reading tensor %q: %v", l.File.Path, l.Info.Name, err)
		}
		out[s.Role] = backend.Weight{Name: l.Info.Name, DType: l.Info.DType, Shape: l.Info.Shape, Region: region, Offset: int(off)}
		off += n
	}
	return off, nil
}

func (p *preadRes) loadGlobals() error {
	var mergerBytes int64
	for _, prefix := range p.ck.Config.MergerPrefixes() {
		mergerBytes = max(mergerBytes, p.layoutBytes(p.ck.Config.MergerTensors(prefix)))
	}
	mem, err := pageAlloc(mergerBytes)
	if err != nil {
		return err
	}
	p.merger = newRegion(mem, false)
	specs := p.ck.Config.EmbedTensors()
	mem, err = pageAlloc(p.layoutBytes(specs))
	if err != nil {
		return err
	}
	p.global = newRegion(mem, false)
	ws := make([]backend.Weight, len(specs))
	if _, err := p.fill(p.global, specs, ws); err != nil {
		return err
	}
	for _, s := range specs {
		p.globals[s.Name] = ws[s.Role]
	}
	return nil
}

func (p *preadRes) Mode() ResidencyMode { return Pread }

// FileAt: pread holds copies, never a mapping.
func (p *preadRes) FileAt(uintptr) string { return "" }
func (p *preadRes) Shrunk() string        { return "" }

func (p *preadRes) Global(name string) backend.Weight { return p.globals[name] }

// Merger reads the merger named by prefix into the merger region unless it is there already.
// The engine asks for a merger only after the previous merger's pass was committed, so no
// pass still reads the region being refilled.
func (p *preadRes) Merger(prefix string) (MergerWeights, WeightFetch, error) {
	if p.mergerPrefix == prefix {
		return p.mergerW, WeightFetch{}, nil
	}
	start := time.Now()
	var w [6]backend.Weight
	p.mergerPrefix = ""
	specs := p.ck.Config.MergerTensors(prefix)
	if _, err := p.fill(p.merger, specs, w[:]); err != nil {
		return MergerWeights{}, WeightFetch{}, err
	}
	p.mergerPrefix, p.mergerW = prefix, mergerWeightsOf(w)
	return p.mergerW, WeightFetch{Wait: time.Since(start), BytesRead: p.ck.tensorBytes(specs)}, nil
}

func (p *preadRes) Block(i int) (*BlockWeights, WeightFetch, error) {
	if i < 0 || i >= p.ck.Config.Depth {
		return nil, WeightFetch{}, fmt.Errorf("block %d outside 0..%d", i, p.ck.Config.Depth-1)
	}
	start := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.find(i)
	if s == nil {
		s = p.startLoad(i)
		if s == nil {
			return nil, WeightFetch{}, fmt.Errorf("pread: every slot is in use (block %d requested)", i)
		}
	}
	for s.state == slotLoading {
		p.cond.Wait()
	}
	if s.err != nil {
		err := s.err
		s.state, s.block, s.err = slotEmpty, -1, nil
		return nil, WeightFetch{}, err
	}
	s.state = slotInUse
	fetch := WeightFetch{Wait: time.Since(start), BytesRead: p.last[i]}
	delete(p.last, i)
	if i+1 < p.ck.Config.Depth && p.find(i+1) == nil {
		p.startLoad(i + 1) // stream the next block while this one computes
	}
	return &s.w, fetch, nil
}

// find returns the slot holding or loading block i. Callers hold mu.
func (p *preadRes) find(i int) *slot {
	for _, s := range p.slots {
		if s.block == i && s.state != slotEmpty {
			return s
		}
	}
	return nil
}

// startLoad claims a slot not in use or loading and reads block i into it in the background.
// Callers hold mu.
func (p *preadRes) startLoad(i int) *slot {
	var s *slot
	for _, c := range p.slots {
		if c.state == slotEmpty || c.state == slotReady {
			if s == nil || c.state == slotEmpty {
				s = c
			}
		}
	}
	if s == nil {
		return nil
	}
	s.block, s.state, s.err = i, slotLoading, nil
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		n, err := p.fill(s.region, p.ck.Config.BlockTensors(i), s.w[:])
		p.mu.Lock()
		s.err = err
		s.state = slotReady
		p.last[i] = n
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	return s
}

func (p *preadRes) Done(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if s.block == i && s.state == slotInUse {
			s.state = slotReady
		}
	}
}

func (p *preadRes) Close() error {
	p.wg.Wait()
	for _, s := range p.slots {
		unix.Munmap(s.region.Bytes)
	}
	p.slots = nil
	for _, r := range []**backend.Region{&p.global, &p.merger} {
		if *r != nil {
			unix.Munmap((*r).Bytes)
			*r = nil
		}
	}
	for _, f := range p.files {
		f.Close()
	}
	return nil
}
