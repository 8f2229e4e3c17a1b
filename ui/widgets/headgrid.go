// headgrid.go: one small heatmap per attention head of a block, labelled h0, h1, ...; a tap
// picks a head. Invariant: the thumbnail in grid slot i (row-major) is maps[i], labelled
// "h<i>", and a tap anywhere in slot i (map or label) reports head i; under SetMaps each map
// is scaled by its own maximum, so every head's hottest patch shows cm.At(1), and under
// SetMapScales map i is painted with exactly the scale given for it (one shared scale makes
// the heads comparable). The mutation that would silently break it: normalising all heads by
// one global maximum where each should have its own (weak heads turn uniformly dark and still
// look like valid maps), or the reverse where the scale is meant to be shared.
package widgets

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	xdraw "golang.org/x/image/draw"

	"github.com/turbospark/inspector/internal/par"
)

// headGridBgWeight is how much of the faint background photo shows through a map.
const headGridBgWeight = 0.3

// HeadGrid shows small heatmaps of every head for one block in a grid with "h0", "h1"...
// labels; a tap selects a head and the selected head is outlined.
//
// Setters may be called from the UI goroutine only; elsewhere wrap them in fyne.Do.
type HeadGrid struct {
	widget.BaseWidget

	onSelect func(head int)

	mu       sync.Mutex
	maps     [][]float32
	scales   []Scale // per map (one: shared by all); nil: each map's own maximum
	grid     PatchGrid
	cm       Colormap
	bg       image.Image
	bgThumb  *image.Gray // bg scaled to the thumbnail size, cached
	thumbs   []*image.RGBA
	selected int
	hovered  int
	gen      int // bumped when thumbnails change
}

// NewHeadGrid returns an empty grid; onSelect (may be nil) is called with the tapped head.
func NewHeadGrid(onSelect func(head int)) *HeadGrid {
	g := &HeadGrid{onSelect: onSelect, selected: -1, hovered: -1}
	g.ExtendBaseWidget(g)
	return g
}

// SetMaps sets maps[head][seq] over grid; each map is normalised to its own maximum (a map
// with no positive value spans its own min..max). The maps are read now and again by
// SetBackground; pass slices the caller no longer changes.
func (g *HeadGrid) SetMaps(maps [][]float32, grid PatchGrid, cm Colormap) {
	if err := grid.Check(); err != nil {
		fyne.LogError("HeadGrid.SetMaps", err)
		maps, grid = nil, PatchGrid{}
	}
	g.setMaps(maps, grid, cm, nil)
}

// SetMapScales is SetMaps with the scale of each map given: scales[i] for map i, or one
// scale shared by every map (len(scales) == 1). NaN values show as "no value".
func (g *HeadGrid) SetMapScales(maps [][]float32, grid PatchGrid, cm Colormap, scales []Scale) {
	if err := grid.Check(); err != nil {
		fyne.LogError("HeadGrid.SetMapScales", err)
		maps, grid = nil, PatchGrid{}
	}
	if len(scales) != 1 && len(scales) != len(maps) {
		fyne.LogError("HeadGrid.SetMapScales", fmt.Errorf("%d scales for %d maps", len(scales), len(maps)))
		scales = nil
	}
	g.setMaps(maps, grid, cm, scales)
}

func (g *HeadGrid) setMaps(maps [][]float32, grid PatchGrid, cm Colormap, scales []Scale) {
	ivLocked(&g.mu, g, func() {
		g.maps, g.grid, g.cm, g.scales = maps, grid, cm, scales
		if g.selected >= len(maps) {
			g.selected = -1
		}
		g.hovered = -1
		g.headGridComposeLocked()
	})
}

// Len is how many maps the grid shows (0 when cleared).
func (g *HeadGrid) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.maps)
}

// SetBackground sets an optional faint photo under each map; nil removes it.
func (g *HeadGrid) SetBackground(img image.Image) {
	ivLocked(&g.mu, g, func() {
		g.bg, g.bgThumb = img, nil
		g.headGridComposeLocked()
	})
}

// SetSelected outlines one head; -1 clears the outline.
func (g *HeadGrid) SetSelected(head int) {
	ivLocked(&g.mu, g, func() { g.selected = ivValid(head, len(g.maps)) })
}

// Selected returns the selected head, -1 for none.
func (g *HeadGrid) Selected() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.selected
}

// headGridThumbSize is the thumbnail's pixel size: one pixel per patch, or, under a
// background photo, k x k pixels per patch so the photo stays recognisable.
func (g *HeadGrid) headGridThumbSize() (w, h, k int) {
	k = 1
	if g.bg != nil && g.grid.Cols > 0 {
		k = max(1, (112+g.grid.Cols-1)/g.grid.Cols)
	}
	return g.grid.Cols * k, g.grid.Rows * k, k
}

func (g *HeadGrid) headGridComposeLocked() {
	g.gen++
	g.thumbs = nil
	n := g.grid.Len()
	if n == 0 || len(g.maps) == 0 {
		return
	}
	tw, th, k := g.headGridThumbSize()
	if g.bg != nil && (g.bgThumb == nil || g.bgThumb.Rect.Dx() != tw || g.bgThumb.Rect.Dy() != th) {
		g.bgThumb = image.NewGray(image.Rect(0, 0, tw, th))
		xdraw.ApproxBiLinear.Scale(g.bgThumb, g.bgThumb.Rect, g.bg, g.bg.Bounds(), xdraw.Src, nil)
	}
	bg := g.bgThumb
	if g.bg == nil {
		bg = nil
	}
	g.thumbs = make([]*image.RGBA, len(g.maps))
	scales := make([]Scale, len(g.maps))
	for h := range g.maps {
		scales[h] = g.headGridScaleLocked(h)
	}
	blend := headGridBlendTable()
	// the heads on all cores (each writes its own thumbnail)
	par.Do(len(g.maps), par.Workers(len(g.maps)), func(_, h int) {
		m, sc := g.maps[h], scales[h]
		img := image.NewRGBA(image.Rect(0, 0, tw, th))
		for r := 0; r < g.grid.Rows; r++ {
			for c := 0; c < g.grid.Cols; c++ {
				s := g.grid.At(r, c)
				col := color.NRGBA{40, 40, 44, 255} // no value
				if s < len(m) {
					if cc := g.cm.At(sc.Norm(m[s])); cc.A != 0 {
						col = cc
					}
				}
				for y := r * k; y < (r+1)*k; y++ {
					for x := c * k; x < (c+1)*k; x++ {
						o := img.PixOffset(x, y)
						p := img.Pix[o : o+4 : o+4]
						if bg != nil {
							l := bg.Pix[bg.PixOffset(x, y)]
							p[0], p[1], p[2] = blend[col.R][l], blend[col.G][l], blend[col.B][l]
						} else {
							p[0], p[1], p[2] = col.R, col.G, col.B
						}
						p[3] = 255
					}
				}
			}
		}
		g.thumbs[h] = img
	})
}

// headGridBlendTable is the thumbnails' blend of a colour channel c with the photo's
// luminance l, round(c*(1-w) + l*w) for w = headGridBgWeight, for every c and l: looked up
// per texel (16 heads x 20,000 texels x 3 channels on every hover at 5,120 patches) instead
// of computed, with the same rounding.
var headGridBlendTable = sync.OnceValue(func() *[256][256]uint8 {
	var t [256][256]uint8
	for c := range 256 {
		for l := range 256 {
			t[c][l] = uint8(math.Round(float64(c)*(1-headGridBgWeight) + float64(l)*headGridBgWeight))
		}
	}
	return &t
})

// Scale is the scale map h is painted with (its own maximum's under SetMaps).
func (g *HeadGrid) Scale(h int) Scale {
	g.mu.Lock()
	defer g.mu.Unlock()
	if h < 0 || h >= len(g.maps) {
		return Scale{}
	}
	return g.headGridScaleLocked(h)
}

// headGridScaleLocked is map h's scale: the one given, or its own maximum (a map without a
// positive maximum over its own range).
func (g *HeadGrid) headGridScaleLocked(h int) Scale {
	switch len(g.scales) {
	case 0:
	case 1:
		return g.scales[0]
	default:
		return g.scales[h]
	}
	hi, lo := float32(math.Inf(-1)), float32(math.Inf(1))
	for _, v := range g.maps[h] {
		if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
			hi, lo = max(hi, v), min(lo, v)
		}
	}
	if !(hi > 0) {
		return LinearScale(lo, hi)
	}
	return LinearScale(0, hi)
}

// headGridCell is one slot: the map's rectangle and the label's rectangle below it.
type headGridCell struct {
	mapPos, lblPos   fyne.Position
	mapSize, lblSize fyne.Size
}

func (c headGridCell) contains(p fyne.Position) bool {
	return p.X >= c.mapPos.X && p.X < c.mapPos.X+c.mapSize.Width &&
		p.Y >= c.mapPos.Y && p.Y < c.lblPos.Y+c.lblSize.Height
}

const (
	headGridGap     = 8
	headGridMinCell = 40
)

// headGridLabelHeight is the height of the "h0" line under each map.
func headGridLabelHeight() float32 {
	return fyne.MeasureText("h00", theme.CaptionTextSize(), fyne.TextStyle{}).Height
}

// headGridLayout picks the column count that gives the largest maps in size and centres the
// block; aspect is the map's width/height. Edges are snapped to device pixels (scale).
func headGridLayout(size fyne.Size, n int, aspect, scale float32) []headGridCell {
	if n <= 0 || aspect <= 0 {
		return nil
	}
	if scale <= 0 {
		scale = 1
	}
	lh := headGridLabelHeight()
	bestW, bestCols := float32(-1), 1
	for cols := 1; cols <= n; cols++ {
		rows := (n + cols - 1) / cols
		w := (size.Width - float32(cols-1)*headGridGap) / float32(cols)
		hAvail := (size.Height-float32(rows-1)*headGridGap)/float32(rows) - lh - 2
		w = min(w, hAvail*aspect)
		if w > bestW+0.5 {
			bestW, bestCols = w, cols
		}
	}
	tw := max(bestW, 1)
	th := tw / aspect
	cols := bestCols
	rows := (n + cols - 1) / cols
	totalW := float32(cols)*tw + float32(cols-1)*headGridGap
	totalH := float32(rows)*(th+2+lh) + float32(rows-1)*headGridGap
	x0 := max((size.Width-totalW)/2, 0)
	y0 := max((size.Height-totalH)/2, 0)
	snap := func(v float32) float32 { return float32(math.Round(float64(v*scale))) / scale }
	cells := make([]headGridCell, n)
	for i := range cells {
		cx := x0 + float32(i%cols)*(tw+headGridGap)
		cy := y0 + float32(i/cols)*(th+2+lh+headGridGap)
		mx, my := snap(cx), snap(cy)
		mw, mh := snap(cx+tw)-mx, snap(cy+th)-my
		cells[i] = headGridCell{
			mapPos: fyne.NewPos(mx, my), mapSize: fyne.NewSize(mw, mh),
			lblPos: fyne.NewPos(mx, my+mh+2), lblSize: fyne.NewSize(mw, lh),
		}
	}
	return cells
}

func (g *HeadGrid) headGridAspectLocked() float32 {
	if g.grid.Rows <= 0 || g.grid.Cols <= 0 {
		return 1
	}
	return float32(g.grid.Cols) / float32(g.grid.Rows)
}

// headGridAt returns the head whose slot holds pos, -1 for none.
func (g *HeadGrid) headGridAt(pos fyne.Position) int {
	g.mu.Lock()
	n, aspect := len(g.thumbs), g.headGridAspectLocked()
	g.mu.Unlock()
	for i, c := range headGridLayout(g.Size(), n, aspect, ivCanvasScale(g)) {
		if c.contains(pos) {
			return i
		}
	}
	return -1
}

// Tapped selects the head under the pointer and calls onSelect.
func (g *HeadGrid) Tapped(ev *fyne.PointEvent) {
	h := g.headGridAt(ev.Position)
	if h < 0 {
		return
	}
	g.SetSelected(h)
	if g.onSelect != nil {
		g.onSelect(h)
	}
}

// MouseIn implements desktop.Hoverable.
func (g *HeadGrid) MouseIn(ev *desktop.MouseEvent) { g.headGridHover(g.headGridAt(ev.Position)) }

// MouseMoved implements desktop.Hoverable.
func (g *HeadGrid) MouseMoved(ev *desktop.MouseEvent) { g.headGridHover(g.headGridAt(ev.Position)) }

// MouseOut implements desktop.Hoverable.
func (g *HeadGrid) MouseOut() { g.headGridHover(-1) }

func (g *HeadGrid) headGridHover(h int) {
	g.mu.Lock()
	changed := h != g.hovered
	g.hovered = h
	g.mu.Unlock()
	if changed {
		g.Refresh()
	}
}

// CreateRenderer implements fyne.Widget.
func (g *HeadGrid) CreateRenderer() fyne.WidgetRenderer {
	g.ExtendBaseWidget(g)
	r := &headGridRenderer{g: g, gen: -1}
	r.empty = canvas.NewText("No attention maps", theme.Color(theme.ColorNamePlaceHolder))
	r.empty.Alignment = fyne.TextAlignCenter
	r.empty.TextSize = theme.CaptionTextSize()
	for i := range 4 {
		r.sel[i] = canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
		r.hover[i] = canvas.NewRectangle(theme.Color(theme.ColorNameForeground))
	}
	r.Refresh()
	return r
}

type headGridSlot struct {
	img    *canvas.Image
	border *canvas.Rectangle
	label  *canvas.Text
}

type headGridRenderer struct {
	g       *HeadGrid
	gen     int
	empty   *canvas.Text
	slots   []headGridSlot
	sel     [4]*canvas.Rectangle
	hover   [4]*canvas.Rectangle
	objects []fyne.CanvasObject
}

func (r *headGridRenderer) Destroy() {}

func (r *headGridRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *headGridRenderer) MinSize() fyne.Size {
	g := r.g
	g.mu.Lock()
	n, aspect := len(g.thumbs), g.headGridAspectLocked()
	g.mu.Unlock()
	if n == 0 {
		return fyne.NewSize(160, 60)
	}
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	rows := (n + cols - 1) / cols
	w := float32(cols)*headGridMinCell + float32(cols-1)*headGridGap
	th := headGridMinCell / aspect
	h := float32(rows)*(th+2+headGridLabelHeight()) + float32(rows-1)*headGridGap
	return fyne.NewSize(w, h)
}

func (r *headGridRenderer) Layout(size fyne.Size) {
	g := r.g
	g.mu.Lock()
	aspect, sel, hov := g.headGridAspectLocked(), g.selected, g.hovered
	g.mu.Unlock()
	r.empty.Move(fyne.Position{})
	r.empty.Resize(size)
	r.empty.Hidden = len(r.slots) > 0
	cells := headGridLayout(size, len(r.slots), aspect, ivCanvasScale(g))
	for i, c := range cells {
		s := r.slots[i]
		s.img.Move(c.mapPos)
		s.img.Resize(c.mapSize)
		s.border.Move(c.mapPos)
		s.border.Resize(c.mapSize)
		s.label.Move(c.lblPos)
		s.label.Resize(c.lblSize)
	}
	headGridFrame(r.sel, cells, sel, 2, 3)
	headGridFrame(r.hover, cells, hov, 1, 1)
	if hov == sel {
		headGridFrame(r.hover, cells, -1, 1, 1)
	}
}

// headGridFrame places a frame of width t, gap units outside slot i's map; hidden for i < 0.
func headGridFrame(rs [4]*canvas.Rectangle, cells []headGridCell, i int, gap, t float32) {
	if i < 0 || i >= len(cells) {
		for _, r := range rs {
			r.Hide()
		}
		return
	}
	c := cells[i]
	x0, y0 := c.mapPos.X-gap-t, c.mapPos.Y-gap-t
	x1, y1 := c.mapPos.X+c.mapSize.Width+gap+t, c.mapPos.Y+c.mapSize.Height+gap+t
	for _, r := range rs {
		r.Hidden = false
	}
	ivPlaceBand(rs, x0, y0, x1, y1, t)
}

func (r *headGridRenderer) Refresh() {
	g := r.g
	g.mu.Lock()
	gen, thumbs := g.gen, g.thumbs
	g.mu.Unlock()

	fg := theme.Color(theme.ColorNameForeground)
	if gen != r.gen {
		r.gen = gen
		for len(r.slots) < len(thumbs) {
			img := &canvas.Image{FillMode: canvas.ImageFillStretch, ScaleMode: canvas.ImageScalePixels}
			b := canvas.NewRectangle(color.Transparent)
			b.StrokeWidth = 1
			lb := canvas.NewText(fmt.Sprintf("h%d", len(r.slots)), fg)
			lb.Alignment = fyne.TextAlignCenter
			r.slots = append(r.slots, headGridSlot{img: img, border: b, label: lb})
		}
		r.slots = r.slots[:len(thumbs)]
		for i, s := range r.slots {
			s.img.Image = thumbs[i]
			s.img.Refresh()
		}
		objs := []fyne.CanvasObject{r.empty}
		for _, s := range r.slots {
			objs = append(objs, s.img, s.border, s.label)
		}
		for _, x := range r.hover {
			objs = append(objs, x)
		}
		for _, x := range r.sel {
			objs = append(objs, x)
		}
		r.objects = objs
	}
	g.mu.Lock()
	sel := g.selected
	g.mu.Unlock()
	for i, s := range r.slots {
		s.border.StrokeColor = theme.Color(theme.ColorNameInputBorder)
		s.label.Color = fg
		s.label.TextStyle.Bold = i == sel
		if i == sel {
			s.label.Color = theme.Color(theme.ColorNamePrimary)
		}
		s.label.TextSize = theme.CaptionTextSize()
	}
	r.empty.Color = theme.Color(theme.ColorNamePlaceHolder)
	for i := range 4 {
		r.sel[i].FillColor = theme.Color(theme.ColorNamePrimary)
		r.hover[i].FillColor = theme.Color(theme.ColorNamePlaceHolder)
	}
	r.Layout(g.Size())
	canvas.Refresh(g)
}

var (
	_ fyne.Tappable     = (*HeadGrid)(nil)
	_ desktop.Hoverable = (*HeadGrid)(nil)
)
