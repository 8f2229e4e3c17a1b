// imageview_layout.go: where the image view's parts lie on screen. The page is letterboxed
// (aspect kept, centred) and its patch boundaries are snapped to device pixels (ivGeometry);
// the renderer places the photo, the overlay, the grid lines and every outline on those
// boundaries, and input (imageview_input.go) hit-tests against the same ones. Invariant:
// outlines, grid lines and taps agree to the pixel, because all of them come from one
// ivGeom. The mutation that would silently break it: placing an outline on unsnapped
// coordinates (float boundaries) — the selection box would sit a pixel off the patch a tap
// at its edge selects.
package widgets

import (
	"fmt"
	"image"
	"math"
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
)

// ivCanvasScale is the canvas scale of obj (device pixels per unit), 1 when not on a canvas.
func ivCanvasScale(obj fyne.CanvasObject) (scale float32) {
	defer func() { // a driver without windows (fyne's test driver with a custom painter) panics
		if recover() != nil {
			scale = 1
		}
	}()
	if app := fyne.CurrentApp(); app != nil && app.Driver() != nil {
		if c := app.Driver().CanvasForObject(obj); c != nil && c.Scale() > 0 {
			return c.Scale()
		}
	}
	return 1
}

// ivGeom is where the image and its patch boundaries lie in widget units, snapped to device
// pixels so that outlines, grid lines and taps agree to the pixel.
type ivGeom struct {
	ok     bool
	xs, ys []float32 // patch boundaries: Cols+1 and Rows+1 values; xs[0], xs[Cols] are the image edges
	unit   float32   // one device pixel in units
}

// ivGeometry letterboxes a W x H image centred in size (aspect kept) and places the grid's
// boundaries: boundary c is pixel column c*W/Cols of the image.
func ivGeometry(size fyne.Size, W, H int, g PatchGrid, scale float32) ivGeom {
	if W <= 0 || H <= 0 || g.Rows <= 0 || g.Cols <= 0 || size.Width <= 0 || size.Height <= 0 {
		return ivGeom{}
	}
	if scale <= 0 {
		scale = 1
	}
	snap := func(v float32) float32 { return float32(math.Round(float64(v*scale))) / scale }
	sc := min(size.Width/float32(W), size.Height/float32(H))
	w, h := float32(W)*sc, float32(H)*sc
	ox, oy := (size.Width-w)/2, (size.Height-h)/2
	geo := ivGeom{ok: true, xs: make([]float32, g.Cols+1), ys: make([]float32, g.Rows+1), unit: 1 / scale}
	for c := range geo.xs {
		geo.xs[c] = snap(ox + float32(c*W/g.Cols)*sc)
	}
	for r := range geo.ys {
		geo.ys[r] = snap(oy + float32(r*H/g.Rows)*sc)
	}
	return geo
}

// ivSearch returns k with bs[k] <= p < bs[k+1], or -1.
func ivSearch(bs []float32, p float32) int {
	n := len(bs) - 1
	if n < 1 || !(p >= bs[0] && p < bs[n]) {
		return -1
	}
	return sort.Search(n, func(k int) bool { return bs[k+1] > p })
}

func (g ivGeom) cellAt(pos fyne.Position) (r, c int, ok bool) {
	if !g.ok {
		return 0, 0, false
	}
	c, r = ivSearch(g.xs, pos.X), ivSearch(g.ys, pos.Y)
	return r, c, r >= 0 && c >= 0
}

// clampedCell is the cell (row, col) under pos, or the nearest edge cell for a position
// outside the image.
func (g ivGeom) clampedCell(pos fyne.Position) [2]int {
	x := min(max(pos.X, g.xs[0]), g.xs[len(g.xs)-1]-g.unit/2)
	y := min(max(pos.Y, g.ys[0]), g.ys[len(g.ys)-1]-g.unit/2)
	return [2]int{max(ivSearch(g.ys, y), 0), max(ivSearch(g.xs, x), 0)}
}

// image returns the image rectangle.
func (g ivGeom) image() (fyne.Position, fyne.Size) {
	x0, y0, x1, y1 := g.xs[0], g.ys[0], g.xs[len(g.xs)-1], g.ys[len(g.ys)-1]
	return fyne.NewPos(x0, y0), fyne.NewSize(x1-x0, y1-y0)
}

// cell returns the rectangle of raster cell (r, c).
func (g ivGeom) cell(r, c int) (x0, y0, x1, y1 float32) {
	return g.xs[c], g.ys[r], g.xs[c+1], g.ys[r+1]
}

// photoW and photoH are the photo's size (0 without one). Callers hold mu.
func (v *ImageView) photoW() int {
	if v.photo == nil {
		return 0
	}
	return v.photo.Rect.Dx()
}

func (v *ImageView) photoH() int {
	if v.photo == nil {
		return 0
	}
	return v.photo.Rect.Dy()
}

// ivPlaceBand lays four rectangles out as the frame of width t just inside (x0,y0)-(x1,y1).
func ivPlaceBand(rs [4]*canvas.Rectangle, x0, y0, x1, y1, t float32) {
	w, h := x1-x0, y1-y0
	rs[0].Move(fyne.NewPos(x0, y0))
	rs[0].Resize(fyne.NewSize(w, t))
	rs[1].Move(fyne.NewPos(x0, y1-t))
	rs[1].Resize(fyne.NewSize(w, t))
	rs[2].Move(fyne.NewPos(x0, y0+t))
	rs[2].Resize(fyne.NewSize(t, max(h-2*t, 0)))
	rs[3].Move(fyne.NewPos(x1-t, y0+t))
	rs[3].Resize(fyne.NewSize(t, max(h-2*t, 0)))
}

func (f *ivFrames) place(x0, y0, x1, y1, halo, haloT, lineT float32) {
	ivPlaceBand(f.halo, x0-halo, y0-halo, x1+halo, y1+halo, haloT)
	ivPlaceBand(f.line, x0, y0, x1, y1, lineT)
}

// ivScreen is one layout pass's geometry: where the image and its patches lie, and which
// cell each sequence index is.
type ivScreen struct {
	ivGeom
	grid     PatchGrid
	rasterOf []int
}

// has says whether sequence index p is a patch of the grid.
func (s ivScreen) has(p int) bool { return p >= 0 && p < len(s.rasterOf) }

// patch returns the screen rectangle of sequence index p.
func (s ivScreen) patch(p int) (x0, y0, x1, y1 float32) {
	return s.cell(s.rasterOf[p]/s.grid.Cols, s.rasterOf[p]%s.grid.Cols)
}

// layoutLocked places every object for the widget size.
func (r *ivRenderer) layoutLocked(size fyne.Size) {
	v := r.v
	r.placeBackdrop(size)
	if v.photo == nil {
		r.hideAllLocked()
		return
	}
	sc := v.screenLocked(size)
	r.img.Hidden = !sc.ok
	if !sc.ok {
		return
	}
	r.placePhotoLocked(sc)
	r.placeGridLines(sc)
	r.placeMarksLocked(sc)
	r.placeSelectionLocked(sc)
	r.placeRegionLocked(sc)
	r.placeHoverLocked(sc, size)
}

// placeBackdrop fills the widget with the background and the "No image" text, and parks the
// frame marker; the overlay stays hidden until the photo is placed.
func (r *ivRenderer) placeBackdrop(size fyne.Size) {
	r.bg.Move(fyne.Position{})
	r.bg.Resize(size)
	r.empty.Hidden = r.v.photo != nil
	r.empty.Move(fyne.Position{})
	r.empty.Resize(size)
	r.frame.Move(fyne.Position{})
	r.frame.Resize(fyne.NewSize(1, 1))
	r.ov.Hidden = true
}

// hideAllLocked hides the photo and every decoration: there is no page.
func (r *ivRenderer) hideAllLocked() {
	r.img.Hidden = true
	r.sel.show(false)
	r.region.show(false)
	r.hover.show(false)
	r.tipBg.Hidden, r.tipText.Hidden = true, true
	for _, l := range r.lines {
		l.Hidden = true
	}
	for _, m := range r.marks {
		m.frames.show(false)
		m.badge.Hidden, m.label.Hidden = true, true
	}
}

// screenLocked is the geometry of the photo and its grid in size; without a valid grid (or
// without room for it) the photo alone, letterboxed, and an empty grid.
func (v *ImageView) screenLocked(size fyne.Size) ivScreen {
	g := v.grid
	geo := ivGeometry(size, v.photo.Rect.Dx(), v.photo.Rect.Dy(), g, ivCanvasScale(v))
	if !geo.ok {
		// no valid grid (or no room): the photo alone, letterboxed
		g = PatchGrid{}
		geo = ivGeometry(size, v.photo.Rect.Dx(), v.photo.Rect.Dy(), PatchGrid{Rows: 1, Cols: 1}, ivCanvasScale(v))
	}
	return ivScreen{ivGeom: geo, grid: g, rasterOf: v.rasterOf}
}

// placePhotoLocked lays the photo and the overlay over the image rectangle.
func (r *ivRenderer) placePhotoLocked(sc ivScreen) {
	o, s := sc.image()
	r.img.Move(o)
	r.img.Resize(s)
	r.ov.Hidden = r.v.overlay == nil || sc.grid.Len() == 0
	r.ov.Move(o)
	r.ov.Resize(s)
}

// placeGridLines lays the grid lines on the patch boundaries: the vertical ones, then the
// horizontal ones.
func (r *ivRenderer) placeGridLines(sc ivScreen) {
	o, s := sc.image()
	u, g := sc.unit, sc.grid
	li := 0
	for c := 1; c < g.Cols && li < len(r.lines); c++ {
		l := r.lines[li]
		l.Hidden = false
		l.Move(fyne.NewPos(sc.xs[c], o.Y))
		l.Resize(fyne.NewSize(u, s.Height))
		li++
	}
	for rr := 1; rr < g.Rows && li < len(r.lines); rr++ {
		l := r.lines[li]
		l.Hidden = false
		l.Move(fyne.NewPos(o.X, sc.ys[rr]))
		l.Resize(fyne.NewSize(s.Width, u))
		li++
	}
}

// placeMarksLocked frames each marked patch and puts its number in a badge at its corner.
func (r *ivRenderer) placeMarksLocked(sc ivScreen) {
	mi := 0
	badgeSize := max(theme.CaptionTextSize()-2, 8)
	for i, p := range r.v.marked {
		if !sc.has(p) || mi >= len(r.marks) {
			continue
		}
		r.marks[mi].place(sc, p, i+1, badgeSize)
		mi++
	}
}

// place frames patch p (a black band over the patch edge, the cyan line one unit inside)
// and writes n in the badge at its top-left corner.
func (m ivMark) place(sc ivScreen, p, n int, badgeSize float32) {
	u := sc.unit
	x0, y0, x1, y1 := sc.patch(p)
	m.frames.show(true)
	m.frames.place(x0+u, y0+u, x1-u, y1-u, u, 3*u, u)
	m.label.Text = fmt.Sprint(n)
	m.label.TextSize = badgeSize
	ts := m.label.MinSize()
	m.badge.Hidden, m.label.Hidden = false, false
	bs := fyne.NewSize(float32(math.Ceil(float64((ts.Width+4*u)/u)))*u, float32(math.Ceil(float64(ts.Height/u)))*u)
	m.badge.Move(fyne.NewPos(x0+u, y0+u))
	m.badge.Resize(bs)
	m.label.Move(fyne.NewPos(x0+u, y0+u))
	m.label.Resize(bs)
}

// placeSelectionLocked outlines the selected patch, or hides the outline.
func (r *ivRenderer) placeSelectionLocked(sc ivScreen) {
	p := r.v.selected
	if !sc.has(p) {
		r.sel.show(false)
		return
	}
	u := sc.unit
	x0, y0, x1, y1 := sc.patch(p)
	r.sel.show(true)
	r.sel.place(x0, y0, x1, y1, u, 4*u, 2*u)
}

// placeRegionLocked outlines SetRegion's rectangle of patches (clipped to the grid), or
// hides the outline.
func (r *ivRenderer) placeRegionLocked(sc ivScreen) {
	g := sc.grid
	rr := r.v.region.Intersect(image.Rect(0, 0, g.Cols, g.Rows))
	if rr.Empty() || g.Len() == 0 {
		r.region.show(false)
		return
	}
	u := sc.unit
	x0, y0, _, _ := sc.cell(rr.Min.Y, rr.Min.X)
	_, _, x1, y1 := sc.cell(rr.Max.Y-1, rr.Max.X-1)
	r.region.show(true)
	r.region.place(x0, y0, x1, y1, u, 3*u, u)
}

// placeHoverLocked outlines the patch under the pointer and puts the tooltip beside the
// pointer, or hides both when the pointer is over no patch.
func (r *ivRenderer) placeHoverLocked(sc ivScreen, size fyne.Size) {
	v := r.v
	p := v.hovered
	if !sc.has(p) || !v.pointerIn {
		r.hover.show(false)
		r.tipBg.Hidden, r.tipText.Hidden = true, true
		return
	}
	u := sc.unit
	x0, y0, x1, y1 := sc.patch(p)
	r.hover.show(true)
	r.hover.place(x0, y0, x1, y1, u, 2*u, u)
	r.placeTip(v.tip, v.pointer, size)
}

// placeTip lays the tooltip's text below and right of the pointer, flipped to the other side
// where it would leave the widget, never past its top-left corner.
func (r *ivRenderer) placeTip(text string, pointer fyne.Position, size fyne.Size) {
	r.tipText.Text = text
	ts := r.tipText.MinSize()
	pad := fyne.NewSize(8, 4)
	bs := fyne.NewSize(ts.Width+2*pad.Width, ts.Height+2*pad.Height)
	pos := pointer.AddXY(14, 18)
	if pos.X+bs.Width > size.Width {
		pos.X = pointer.X - bs.Width - 6
	}
	if pos.Y+bs.Height > size.Height {
		pos.Y = pointer.Y - bs.Height - 6
	}
	pos.X, pos.Y = max(pos.X, 0), max(pos.Y, 0)
	r.tipBg.Hidden, r.tipText.Hidden = text == "", text == ""
	r.tipBg.Move(pos)
	r.tipBg.Resize(bs)
	r.tipText.Move(pos.AddXY(pad.Width, pad.Height))
	r.tipText.Resize(ts)
}
