// Package geom is where every patch of a page sits: the grids, the merge-window sequence
// order and its inverse, the attention segments, the (row, col) positions, the bilinear
// position embedding and the 2D rope tables (spec sections 3-5). The engine builds its
// inputs from it and the window draws with it; nobody else derives the order.
//
// Invariant: row i of pixel_values, of the position embedding and of the rope table describe
// the same patch, and Index is the exact inverse of Pos. The mutation that would silently
// break it: raster order for positions while pixels are in merge-window order — every shape
// agrees, every patch gets a neighbour's position.
package geom

import (
	"fmt"
	"math"

	"github.com/turbospark/inspector/engine/backend"
)

// Grid is one image or video: T temporal slices of H x W patches (grid_thw).
type Grid struct{ T, H, W int }

// Patches is T*H*W.
func (g Grid) Patches() int { return g.T * g.H * g.W }

// PatchPos is a patch's full-resolution (row, col) within its frame.
type PatchPos struct{ Row, Col int }

// Layout is the placement of every row of a page, and which rows each block lets attend to
// each other.
//
// Attention segments are per block: a block attends within its Segments (one per frame) unless
// the family made it windowed (SetWindows), and then within the windows, each a run of rows
// inside one frame. Everything that computes or draws an attention row (the graph, the probes,
// the window) asks SegmentsOf(block) or SegmentOf(block, row), never Segments directly: a
// windowed block's row is zero outside the query's window.
// Mutation that would silently break it: a probe that takes the frame (Segments) for a
// windowed block: its rows would spread over keys the block never looked at, a fluent wrong
// heatmap (engine's TestWindowedBlockRowsMatchTheGraph catches it).
type Layout struct {
	Grids    []Grid
	Merge    int               // the merge window's side (spatial_merge_size)
	Segments []backend.Segment // one per (grid, temporal slice): the frames
	Pos      []PatchPos        // per row
	GridOf   []int             // per row: index into Grids

	windows  []backend.Segment // the attention windows of the windowed blocks, in row order
	windowed []bool            // per block: attends within windows, not frames

	// order[i] is the processor's row (pixel_values' merge order) that row i holds, when the
	// rows are not in that order (UseWindowOrder); nil: row i is the processor's row i.
	order []int
	inv   []int // inv[p] is the row that holds the processor's row p
}

// NewLayout checks the grids and places their patches, merge x merge windows at a time.
func NewLayout(merge int, grids []Grid) (*Layout, error) {
	if len(grids) == 0 {
		return nil, fmt.Errorf("no grids")
	}
	if merge < 1 {
		return nil, fmt.Errorf("merge size %d: want at least 1", merge)
	}
	m := merge
	l := &Layout{Grids: grids, Merge: m}
	for gi, g := range grids {
		if g.T <= 0 || g.H <= 0 || g.W <= 0 || g.H%m != 0 || g.W%m != 0 {
			return nil, fmt.Errorf("grid %d (t=%d, h=%d, w=%d): t, h, w must be positive and h, w multiples of the merge size %d", gi, g.T, g.H, g.W, m)
		}
		for t := 0; t < g.T; t++ {
			start := len(l.Pos)
			for i := 0; i < g.H*g.W; i++ {
				l.Pos = append(l.Pos, MergeOrderPos(i, g.W, m))
				l.GridOf = append(l.GridOf, gi)
			}
			l.Segments = append(l.Segments, backend.Segment{Start: start, End: len(l.Pos)})
		}
	}
	return l, nil
}

// MergeOrderPos is the patch (row, col) of sequence index i of one frame w patches wide:
// merge windows of m x m patches row-major, patches row-major inside a window, i.e.
// i = ((br*(w/m)+bc)*m + ir)*m + ic with row = br*m+ir, col = bc*m+ic. The one derivation of
// the merge order: the Layout's rows (rope, position embedding, probes, overlays) and
// imageproc's pixel_values rows both take it from here.
func MergeOrderPos(i, w, m int) PatchPos {
	ic, ir := i%m, (i/m)%m
	win := i / (m * m)
	br, bc := win/(w/m), win%(w/m)
	return PatchPos{br*m + ir, bc*m + ic}
}

// Index is the sequence index of the patch at (row, col) of frame t of grid gi: the
// inverse of Pos (merge windows row-major, patches row-major inside a window).
func (l *Layout) Index(gi, t, row, col int) int {
	start := 0
	for _, g := range l.Grids[:gi] {
		start += g.Patches()
	}
	g, m := l.Grids[gi], l.Merge
	win := (row/m)*(g.W/m) + col/m
	p := start + t*g.H*g.W + win*m*m + (row%m)*m + col%m
	if l.inv != nil {
		return l.inv[p]
	}
	return p
}

// UseWindowOrder reorders every frame's rows as Qwen2.5-VL does before its blocks: the
// frame's merge units (m x m patches, consecutive rows) grouped into windows of side x side
// units, windows row-major over the frame, units row-major inside a window; the windows at
// the right and bottom edges are smaller. It returns the windows as segments of the new order
// (for SetWindows). Pos, GridOf and Index follow; ProcessorRow maps a row back.
func (l *Layout) UseWindowOrder(side int) ([]backend.Segment, error) {
	if side < 1 {
		return nil, fmt.Errorf("window of %d merge units: want at least 1", side)
	}
	if l.order != nil {
		return nil, fmt.Errorf("the rows are already in window order")
	}
	m := l.Merge
	order := make([]int, 0, l.Rows())
	var windows []backend.Segment
	for _, f := range l.Segments { // frames in order; each frame's rows are its units in merge order
		g := l.Grids[l.GridOf[f.Start]]
		uh, uw := g.H/m, g.W/m
		for wr := 0; wr < uh; wr += side {
			for wc := 0; wc < uw; wc += side {
				start := len(order)
				for r := wr; r < min(wr+side, uh); r++ {
					for c := wc; c < min(wc+side, uw); c++ {
						unit := f.Start + (r*uw+c)*m*m
						for k := range m * m {
							order = append(order, unit+k)
						}
					}
				}
				windows = append(windows, backend.Segment{Start: start, End: len(order)})
			}
		}
	}
	inv := make([]int, len(order))
	pos, gridOf := make([]PatchPos, len(order)), make([]int, len(order))
	for i, p := range order {
		inv[p] = i
		pos[i], gridOf[i] = l.Pos[p], l.GridOf[p]
	}
	l.order, l.inv, l.Pos, l.GridOf = order, inv, pos, gridOf
	return windows, nil
}

// ProcessorRow is the processor's row (pixel_values' merge order) that row i holds.
func (l *Layout) ProcessorRow(i int) int {
	if l.order != nil {
		return l.order[i]
	}
	return i
}

// RowOfProcessor is the row that holds the processor's row p: ProcessorRow's inverse.
func (l *Layout) RowOfProcessor(p int) int {
	if l.inv != nil {
		return l.inv[p]
	}
	return p
}

// ToLayoutOrder returns x ([rows of width] in the processor's order) in row order: x itself
// when the orders agree.
func (l *Layout) ToLayoutOrder(x []float32, width int) []float32 {
	return permuteRows(x, width, l.order)
}

// ToProcessorOrder returns x ([rows of width] in row order, rows a multiple of the layout's or
// the merged rows' count) in the processor's order: x itself when the orders agree. Merged rows
// (one per m x m unit) follow the units: unit u holds the processor's unit order[u*m*m]/(m*m).
func (l *Layout) ToProcessorOrder(x []float32, width int) []float32 {
	if l.order == nil {
		return x
	}
	n := len(x) / width
	unit := 1
	if n != len(l.order) {
		unit = l.Merge * l.Merge
	}
	out := make([]float32, len(x))
	for i := range n {
		p := l.order[i*unit] / unit
		copy(out[p*width:(p+1)*width], x[i*width:(i+1)*width])
	}
	return out
}

// ToLayoutOrderMerged is ToProcessorOrder's inverse for merged rows (one per m x m unit):
// x in the processor's unit order, returned in the rows' unit order.
func (l *Layout) ToLayoutOrderMerged(x []float32, width int) []float32 {
	if l.order == nil {
		return x
	}
	m2 := l.Merge * l.Merge
	out := make([]float32, len(x))
	for u := range len(x) / width {
		p := l.order[u*m2] / m2
		copy(out[u*width:(u+1)*width], x[p*width:(p+1)*width])
	}
	return out
}

// permuteRows gathers rows: out[i] = x[order[i]] ([n, width]); x itself for a nil order.
func permuteRows(x []float32, width int, order []int) []float32 {
	if order == nil {
		return x
	}
	out := make([]float32, len(x))
	for i, p := range order {
		copy(out[i*width:(i+1)*width], x[p*width:(p+1)*width])
	}
	return out
}

// Rows is the sequence length S.
func (l *Layout) Rows() int { return len(l.Pos) }

// FrameOf returns the frame (one of Segments) that holds row i: the reach of attention over
// any number of blocks, windowed or not.
func (l *Layout) FrameOf(i int) backend.Segment { return SegmentHolding(l.Segments, i) }

// SegmentsOf is block's attention segments: the windows if it is windowed, else the frames.
func (l *Layout) SegmentsOf(block int) []backend.Segment {
	if l.Windowed(block) {
		return l.windows
	}
	return l.Segments
}

// SegmentOf returns the segment of block that holds row i: the keys query i attends to there.
func (l *Layout) SegmentOf(block, i int) backend.Segment {
	return SegmentHolding(l.SegmentsOf(block), i)
}

// Windows is the attention windows of the windowed blocks, in row order (nil: no block is
// windowed).
func (l *Layout) Windows() []backend.Segment { return l.windows }

// Windowed says whether block attends within windows rather than whole frames.
func (l *Layout) Windowed(block int) bool {
	return block >= 0 && block < len(l.windowed) && l.windowed[block]
}

// AnyWindowed says whether some block of the page is windowed.
func (l *Layout) AnyWindowed() bool {
	for _, w := range l.windowed {
		if w {
			return true
		}
	}
	return false
}

// SetWindows makes the listed blocks (of depth) attend within windows: runs of consecutive
// rows that together cover every row, in order, each inside one frame.
func (l *Layout) SetWindows(windows []backend.Segment, blocks []int, depth int) error {
	next := 0
	for i, w := range windows {
		if w.Start != next || w.End <= w.Start {
			return fmt.Errorf("window %d (rows %d..%d): windows must be non-empty runs that follow each other from row 0", i, w.Start, w.End)
		}
		if f := l.FrameOf(w.Start); w.End > f.End {
			return fmt.Errorf("window %d (rows %d..%d) crosses the end of its frame at row %d", i, w.Start, w.End, f.End)
		}
		next = w.End
	}
	if next != l.Rows() {
		return fmt.Errorf("windows cover %d of %d rows", next, l.Rows())
	}
	windowed := make([]bool, depth)
	for _, b := range blocks {
		if b < 0 || b >= depth {
			return fmt.Errorf("windowed block %d: the tower has blocks 0..%d", b, depth-1)
		}
		windowed[b] = true
	}
	l.windows, l.windowed = windows, windowed
	return nil
}

// SegmentHolding is the segment of segs that holds row i (the zero Segment if none does).
func SegmentHolding(segs []backend.Segment, i int) backend.Segment {
	for _, s := range segs {
		if i >= s.Start && i < s.End {
			return s
		}
	}
	return backend.Segment{}
}

// PosEmbed interpolates the N x N learned table bilinearly (align_corners=True) to each
// grid and returns [S, D] in row order. Numerics of HF 5.17: float32 coordinates and
// weights, table rows widened to f32, an f32 weighted sum in which every product w*e is
// rounded to float32 before it is added (torch multiplies, then adds the four tensors).
// The float32(...) around the product says so to the compiler: without it Go on arm64
// fuses the multiply-add, and the embedding differs in the last bits from HF and from
// amd64 (whose default GOAMD64=v1 build never fuses).
func (l *Layout) PosEmbed(table []float32, n, d int) []float32 {
	out := make([]float32, len(l.Pos)*d)
	for i, p := range l.Pos {
		g := l.Grids[l.GridOf[i]]
		y0, y1, dy := interpAxis(p.Row, g.H, n)
		x0, x1, dx := interpAxis(p.Col, g.W, n)
		taps := [4]struct {
			idx int
			w   float32
		}{{y0*n + x0, (1 - dy) * (1 - dx)}, {y0*n + x1, (1 - dy) * dx}, {y1*n + x0, dy * (1 - dx)}, {y1*n + x1, dy * dx}}
		row := out[i*d : (i+1)*d]
		for _, t := range taps {
			e := table[t.idx*d : (t.idx+1)*d]
			for j := range row {
				row[j] += float32(t.w * e[j])
			}
		}
	}
	return out
}

// interpAxis: s = p*(n-1)/max(size-1,1) in float32; lower index, upper index, fraction.
func interpAxis(p, size, n int) (int, int, float32) {
	s := float32(p) * float32(n-1) / float32(max(size-1, 1))
	i0 := int(math.Floor(float64(s)))
	i0 = min(max(i0, 0), n-1)
	return i0, min(i0+1, n-1), s - float32(i0)
}

// RopeTables returns cos and sin, each [S, hd]: angle vector [r*inv, c*inv, r*inv, c*inv]
// with inv[k] = theta^(-2k/(hd/2)), k < hd/4, all in float32 as HF computes them.
func (l *Layout) RopeTables(hd int, theta float64) (cos, sin []float32) {
	d := hd / 2
	inv := make([]float32, d/2)
	for k := range inv {
		inv[k] = float32(1 / math.Pow(theta, float64(2*k)/float64(d)))
	}
	cos = make([]float32, len(l.Pos)*hd)
	sin = make([]float32, len(l.Pos)*hd)
	for i, p := range l.Pos {
		c, s := cos[i*hd:(i+1)*hd], sin[i*hd:(i+1)*hd]
		for k, f := range inv {
			for half := 0; half < 2; half++ { // the angle vector repeats: halves convention
				base := half * d
				ar, ac := float32(p.Row)*f, float32(p.Col)*f
				c[base+k], s[base+k] = float32(math.Cos(float64(ar))), float32(math.Sin(float64(ar)))
				c[base+d/2+k], s[base+d/2+k] = float32(math.Cos(float64(ac))), float32(math.Sin(float64(ac)))
			}
		}
	}
	return cos, sin
}
