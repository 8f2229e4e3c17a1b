// imageview.go: the page image with its per-patch heatmap overlay (painted through a Scale:
// scale.go), patch grid, selection box, numbered marks and hover read-out (with the modifier
// keys held, for a view that follows the pointer); ComposeHeatmap and DecorateHeatmap draw
// the same at any resolution for exports. Invariant: the patch at screen row r, column c
// (inside the letterboxed image rectangle) is always sequence index grid.Index(r, c) — in
// taps, hover, the overlay colour, the selection box and the marks alike. The mutation that
// would silently break it: using the raster index r*Cols+c anywhere (on a grid in merge-window
// order every patch would still get a plausible colour, just the wrong one).
//
// On screen the photo and the overlay are two images: the photo is uploaded to the GPU once
// per page, and the overlay is one pixel per patch (Cols x Rows), stretched over the photo
// with nearest sampling and blended at the opacity. A new map (a hover that follows the
// pointer) uploads Cols x Rows pixels, not the page's 1.3 million; the composed page (the
// exports', OverlayImage) is made only when asked for. OnFrame times a hover to the paint of
// the frame that shows its map.
package widgets

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"sort"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/turbospark/inspector/internal/par"
)

// PatchGrid says how patches tile the image: Rows x Cols patches; Index(row, col) is the
// patch's sequence index (the engine orders patches in merge windows, not raster order: the
// window passes engine/geom's Layout.Index). A nil Index means raster order (row*Cols + col).
type PatchGrid struct {
	Rows, Cols int
	Index      func(row, col int) int
}

// Len is the number of patches.
func (g PatchGrid) Len() int {
	if g.Rows <= 0 || g.Cols <= 0 {
		return 0
	}
	return g.Rows * g.Cols
}

// At returns grid.Index(row, col), or the raster index when Index is nil.
func (g PatchGrid) At(row, col int) int {
	if g.Index == nil {
		return row*g.Cols + col
	}
	return g.Index(row, col)
}

// Check reports an Index that is not a permutation of 0..Len()-1.
func (g PatchGrid) Check() error {
	_, err := ivRasterOf(g)
	return err
}

// ivRasterOf inverts the grid: rasterOf[seq] = row*Cols + col.
func ivRasterOf(g PatchGrid) ([]int, error) {
	n := g.Len()
	inv := make([]int, n)
	for i := range inv {
		inv[i] = -1
	}
	for r := 0; r < g.Rows; r++ {
		for c := 0; c < g.Cols; c++ {
			s := g.At(r, c)
			if s < 0 || s >= n {
				return nil, fmt.Errorf("patch grid %dx%d: Index(%d, %d) = %d is out of range", g.Rows, g.Cols, r, c, s)
			}
			if inv[s] >= 0 {
				return nil, fmt.Errorf("patch grid %dx%d: Index(%d, %d) = %d repeats", g.Rows, g.Cols, r, c, s)
			}
			inv[s] = r*g.Cols + c
		}
	}
	return inv, nil
}

// Colours of the decorations; each is drawn over a black halo so it reads on any colour.
var (
	ivSelectColor = color.NRGBA{255, 255, 255, 255}
	ivMarkColor   = color.NRGBA{0, 229, 255, 255}
	ivRegionColor = color.NRGBA{255, 193, 7, 255} // amber: the query's window
	ivHaloColor   = color.NRGBA{0, 0, 0, 255}
	ivGridColor   = color.NRGBA{255, 255, 255, 72}
	ivHoverColor  = color.NRGBA{255, 255, 255, 200}
	ivTipBgColor  = color.NRGBA{18, 18, 20, 230}
	ivTipFgColor  = color.NRGBA{240, 240, 240, 255}
	ivBadgeBg     = color.NRGBA{0, 0, 0, 200}
)

// ImageView shows the page image with a heatmap overlay, one value per patch.
//
// Setters may be called from the UI goroutine only; elsewhere wrap them in fyne.Do.
// OnSelect and OnHover run on the UI goroutine, without any lock held.
type ImageView struct {
	widget.BaseWidget
	OnSelect func(patch int) // tapped a patch (sequence index)
	OnHover  func(patch int) // pointer over a patch; -1 when it leaves
	// OnHoverMods is OnHover with the modifier keys held (fyne.KeyModifierShift, ...), for
	// a view that follows the pointer while a key is held. Called when the patch under the
	// pointer or the modifiers change.
	OnHoverMods func(patch int, mods fyne.KeyModifier)
	// OnFrame, when set, gets the time from the event TimeNextOverlay named (a pointer move
	// that the map follows) to the paint of the first frame showing the overlay set after
	// it: what following the pointer costs, as the user sees it. It runs on the painting
	// goroutine.
	OnFrame func(eventToPaint time.Duration)
	// OnDragRect, when set, makes a drag over the image outline the rectangle of patches it
	// spans (clamped to the image) and hands it over at the drag's end: columns Min.X..Max.X-1,
	// rows Min.Y..Max.Y-1. Unset, a drag does nothing.
	OnDragRect func(r image.Rectangle)

	mu        sync.Mutex
	dragging  bool
	dragFrom  [2]int      // the cell (row, col) where the drag began
	photo     *image.RGBA // the page, origin at 0,0
	grid      PatchGrid
	rasterOf  []int // seq -> row*Cols+col; nil when there is no valid grid
	values    []float32
	cm        Colormap
	scale     Scale
	opacity   float64
	showGrid  bool
	selected  int
	marked    []int
	region    image.Rectangle // patch columns (X) and rows (Y) outlined (SetRegion); empty: none
	hoverText func(patch int) string
	overlay   *image.NRGBA // one pixel per patch, raster order (nil: no overlay); replaced, never mutated
	composed  *image.RGBA  // photo + overlay at the page's size, made when asked for; replaced, never mutated
	hovered   int
	pointer   fyne.Position
	pointerIn bool
	mods      fyne.KeyModifier // held at the last pointer event
	tip       string           // hover text of the hovered patch
	dirty     ivDirty
	movedAt   time.Time // when the pointer last moved to another patch
	timeFrom  time.Time // the event the next overlay answers (TimeNextOverlay; zero: none)
	frameFor  time.Time // the hover whose map waits for its frame (zero: none)
}

type ivDirty uint8

const (
	ivDirtyImage   ivDirty = 1 << iota // the photo changed
	ivDirtyOverlay                     // the overlay's pixels or opacity changed
	ivDirtyDeco                        // grid, selection or marks changed
	ivDirtyHover                       // hover box or tooltip changed
)

// NewImageView returns an empty view: overlay opacity 0.6, no selection, grid hidden.
func NewImageView() *ImageView {
	v := &ImageView{opacity: 0.6, selected: -1, hovered: -1}
	v.ExtendBaseWidget(v)
	return v
}

// SetImage sets the resized page the patches were cut from; patch (r,c) covers pixels
// [c*W/Cols,(c+1)*W/Cols) x [r*H/Rows,(r+1)*H/Rows). When the patch count changes the
// overlay, the selection and the marks are cleared. A grid whose Index is not a permutation
// is logged and treated as no grid (the photo shows, nothing is selectable).
func (v *ImageView) SetImage(img image.Image, grid PatchGrid) {
	var photo *image.RGBA
	if img != nil && !img.Bounds().Empty() {
		b := img.Bounds()
		photo = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(photo, photo.Rect, img, b.Min, draw.Src)
	}
	inv, err := ivRasterOf(grid)
	if err != nil {
		fyne.LogError("ImageView.SetImage", err)
		grid, inv = PatchGrid{}, nil
	}
	ivLocked(&v.mu, v, func() {
		if grid.Len() != v.grid.Len() {
			v.values, v.selected, v.marked = nil, -1, nil
		}
		v.photo, v.grid, v.rasterOf = photo, grid, inv
		v.hovered = -1
		v.ivOverlayLocked()
		v.tip = ""
		v.dirty |= ivDirtyImage | ivDirtyOverlay | ivDirtyDeco | ivDirtyHover
	})
}

// SetOverlay sets one value per sequence index, coloured by cm over [lo, hi]; nil clears
// the overlay. NaN values and missing entries leave their patch uncoloured.
func (v *ImageView) SetOverlay(values []float32, cm Colormap, lo, hi float32) {
	v.SetOverlayScale(values, cm, LinearScale(lo, hi))
}

// SetOverlayScale is SetOverlay with any Scale (log, clipped, diverging): each value is
// coloured cm.At(sc.Norm(value)).
func (v *ImageView) SetOverlayScale(values []float32, cm Colormap, sc Scale) {
	ivLocked(&v.mu, v, func() {
		v.values = append(v.values[:0:0], values...)
		if values == nil {
			v.values = nil
		}
		v.cm, v.scale = cm, sc
		v.ivOverlayLocked()
		v.dirty |= ivDirtyOverlay
		if !v.timeFrom.IsZero() { // the map an event asked for: time its frame
			v.frameFor, v.timeFrom = v.timeFrom, time.Time{}
		}
	})
	v.ivUpdateTip()
}

// MovedAt is when the pointer last moved onto another patch: the event a map that follows
// it answers.
func (v *ImageView) MovedAt() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.movedAt
}

// TimeNextOverlay says that the next overlay set answers the event at: OnFrame gets the time
// from it to the paint of that overlay's frame.
func (v *ImageView) TimeNextOverlay(at time.Time) {
	v.mu.Lock()
	v.timeFrom = at
	v.mu.Unlock()
}

// SetOpacity sets the overlay opacity, clamped to 0..1.
func (v *ImageView) SetOpacity(a float64) {
	if math.IsNaN(a) {
		a = 0
	}
	a = math.Min(math.Max(a, 0), 1)
	v.mu.Lock()
	if a == v.opacity {
		v.mu.Unlock()
		return
	}
	v.opacity = a
	v.composed = nil // the overlay's pixels stay: the opacity is the GPU's blend
	v.dirty |= ivDirtyOverlay
	v.mu.Unlock()
	v.Refresh()
}

// ivLocked runs change with mu held, then refreshes w once mu is released: the renderers of
// the widgets whose state sits behind a mutex (ImageView, HeadGrid) take it too, so a setter
// must never Refresh under it.
func ivLocked(mu *sync.Mutex, w fyne.Widget, change func()) {
	mu.Lock()
	change()
	mu.Unlock()
	w.Refresh()
}

// ivValid is i when it indexes n items, else -1 (none).
func ivValid(i, n int) int {
	if i < 0 || i >= n {
		return -1
	}
	return i
}

// Opacity returns the overlay opacity.
func (v *ImageView) Opacity() float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.opacity
}

// SetShowGrid shows or hides thin patch grid lines.
func (v *ImageView) SetShowGrid(on bool) {
	ivLocked(&v.mu, v, func() {
		v.showGrid = on
		v.dirty |= ivDirtyDeco
	})
}

// SetSelected outlines one patch (sequence index); -1 (or any index outside the grid) clears it.
func (v *ImageView) SetSelected(patch int) {
	ivLocked(&v.mu, v, func() {
		v.selected = ivValid(patch, len(v.rasterOf))
		v.dirty |= ivDirtyDeco
	})
}

// Selected returns the selected sequence index, -1 for none.
func (v *ImageView) Selected() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.selected
}

// SetMarked outlines patches (sequence indices) with small numbered frames, 1 for the first.
func (v *ImageView) SetMarked(patches []int) {
	ivLocked(&v.mu, v, func() {
		v.marked = append([]int(nil), patches...)
		v.dirty |= ivDirtyDeco
	})
}

// SetRegion outlines the patches of columns r.Min.X..r.Max.X-1 and rows r.Min.Y..r.Max.Y-1
// (e.g. the query's attention window in a windowed block); the empty rectangle clears it.
func (v *ImageView) SetRegion(r image.Rectangle) {
	ivLocked(&v.mu, v, func() {
		v.region = r
		v.dirty |= ivDirtyDeco
	})
}

// Region is the outlined rectangle of patches (SetRegion).
func (v *ImageView) Region() image.Rectangle {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.region
}

// SetHoverText sets the text shown near the pointer while it is over a patch; nil gives the
// default "r R  c C  seq S" followed by the overlay value when there is one.
func (v *ImageView) SetHoverText(f func(patch int) string) {
	v.mu.Lock()
	v.hoverText = f
	v.mu.Unlock()
	v.ivUpdateTip()
}

// PatchAt returns the sequence index under a widget-local position, -1 outside the image.
func (v *ImageView) PatchAt(pos fyne.Position) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ivPatchAtLocked(pos, v.Size())
}

func (v *ImageView) ivPatchAtLocked(pos fyne.Position, size fyne.Size) int {
	if v.photo == nil || v.rasterOf == nil {
		return -1
	}
	geo := ivGeometry(size, v.photo.Rect.Dx(), v.photo.Rect.Dy(), v.grid, ivCanvasScale(v))
	r, c, ok := geo.cellAt(pos)
	if !ok {
		return -1
	}
	return v.grid.At(r, c)
}

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

// ivPatchRect returns the pixel rectangle of raster cell (r, c) in a W x H image.
func ivPatchRect(g PatchGrid, W, H, r, c int) image.Rectangle {
	return image.Rect(c*W/g.Cols, r*H/g.Rows, (c+1)*W/g.Cols, (r+1)*H/g.Rows)
}

// Snapshot returns the composed view (photo + overlay + grid + selection + marks) at image
// resolution, as a new image; nil without an image.
func (v *ImageView) Snapshot() image.Image {
	v.mu.Lock()
	defer v.mu.Unlock()
	composed := v.ivComposedLocked()
	if composed == nil {
		return nil
	}
	out := image.NewRGBA(composed.Rect)
	copy(out.Pix, composed.Pix)
	ivDecorate(out, v.grid, v.rasterOf, v.showGrid, v.marked, v.selected, v.region)
	return out
}

// DecorateHeatmap draws on img (a composed heatmap of grid at any resolution) what the view
// draws over it: thin grid lines (showGrid), the numbered marks and the selection box.
func DecorateHeatmap(img *image.RGBA, grid PatchGrid, showGrid bool, marked []int, selected int) {
	inv, err := ivRasterOf(grid)
	if err != nil {
		return
	}
	ivDecorate(img, grid, inv, showGrid, marked, selected, image.Rectangle{})
}

func ivDecorate(out *image.RGBA, g PatchGrid, rasterOf []int, showGrid bool, marked []int, selected int, region image.Rectangle) {
	W, H := out.Rect.Dx(), out.Rect.Dy()
	if showGrid && rasterOf != nil {
		for c := 1; c < g.Cols; c++ {
			ivBlendRect(out, image.Rect(c*W/g.Cols, 0, c*W/g.Cols+1, H), ivGridColor)
		}
		for r := 1; r < g.Rows; r++ {
			ivBlendRect(out, image.Rect(0, r*H/g.Rows, W, r*H/g.Rows+1), ivGridColor)
		}
	}
	if rr := region.Intersect(image.Rect(0, 0, g.Cols, g.Rows)); !rr.Empty() && rasterOf != nil {
		box := ivPatchRect(g, W, H, rr.Min.Y, rr.Min.X).Union(ivPatchRect(g, W, H, rr.Max.Y-1, rr.Max.X-1))
		ivBand(out, box, 2, ivHaloColor)
		ivBand(out, box.Inset(1), 1, ivRegionColor)
	}
	for i, p := range marked {
		if p < 0 || p >= len(rasterOf) {
			continue
		}
		pr := ivPatchRect(g, W, H, rasterOf[p]/g.Cols, rasterOf[p]%g.Cols)
		ivBand(out, pr, 3, ivHaloColor)
		ivBand(out, pr.Inset(1), 1, ivMarkColor)
		ivDrawBadge(out, pr, fmt.Sprint(i+1))
	}
	if p := selected; p >= 0 && p < len(rasterOf) {
		pr := ivPatchRect(g, W, H, rasterOf[p]/g.Cols, rasterOf[p]%g.Cols)
		ivBand(out, pr.Inset(-1), 4, ivHaloColor)
		ivBand(out, pr, 2, ivSelectColor)
	}
}

// OverlayImage returns the composed photo + overlay as drawn (the GPU's blend of the
// two may differ from it by one level in a channel); nil without an image. The image is
// never modified afterwards (a change composes a new one).
func (v *ImageView) OverlayImage() image.Image {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.ivComposedLocked(); c != nil {
		return c
	}
	return nil
}

// MapImage is the overlay alone, each patch a px x px block of exactly its colormap colour
// (the colorbar's; no photo, no blend): nil without an overlay.
func (v *ImageView) MapImage(px int) *image.NRGBA {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.overlay == nil || px < 1 {
		return nil
	}
	b := v.overlay.Rect
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx()*px, b.Dy()*px))
	for y := range out.Rect.Dy() {
		for x := range out.Rect.Dx() {
			out.SetNRGBA(x, y, v.overlay.NRGBAAt(x/px, y/px))
		}
	}
	return out
}

// ivComposedLocked is the photo with the overlay blended over it (ivCompose), made on the
// first ask after a change; nil without a photo.
func (v *ImageView) ivComposedLocked() *image.RGBA {
	if v.photo == nil {
		return nil
	}
	if v.composed == nil {
		values := v.values
		if v.rasterOf == nil {
			values = nil
		}
		v.composed = ivCompose(v.photo, v.grid, values, v.cm, v.scale, v.opacity)
	}
	return v.composed
}

// ivOverlayLocked makes the overlay's texture: pixel (c, r) is the colour of the value of
// sequence index grid.At(r, c), opaque, or transparent where the patch is uncoloured (no
// value, NaN); nil without values or a grid. The composed page is made again when asked.
func (v *ImageView) ivOverlayLocked() {
	v.composed = nil
	g := v.grid
	if v.photo == nil || v.values == nil || v.rasterOf == nil || g.Len() == 0 {
		v.overlay = nil
		return
	}
	ov := image.NewNRGBA(image.Rect(0, 0, g.Cols, g.Rows))
	for r := range g.Rows {
		for c := range g.Cols {
			if s := g.At(r, c); s < len(v.values) {
				col := v.cm.At(v.scale.Norm(v.values[s]))
				if col.A != 0 {
					col.A = 255
				}
				ov.SetNRGBA(c, r, col)
			}
		}
	}
	v.overlay = ov
}

// ComposeHeatmap is the view's heatmap at any resolution: img (scaled to fill, origin 0,0)
// with the overlay of grid blended over it exactly as the view composes it. For exports
// (2x, thumbnails of a contact sheet). A grid that is not a permutation gives the photo
// alone.
func ComposeHeatmap(img image.Image, grid PatchGrid, values []float32, cm Colormap, sc Scale, opacity float64) *image.RGBA {
	b := img.Bounds()
	photo := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(photo, photo.Rect, img, b.Min, draw.Src)
	if grid.Check() != nil {
		values = nil
	}
	return ivCompose(photo, grid, values, cm, sc, opacity)
}

// ivCompose blends values over photo into a fresh RGBA:
// out = photo*(1-a) + colour*a with a = opacity in steps of 1/256 (exact at 0 and 1);
// uncoloured patches are copied.
func ivCompose(photo *image.RGBA, g PatchGrid, values []float32, cm Colormap, sc Scale, opacity float64) *image.RGBA {
	out := image.NewRGBA(photo.Rect)
	w := uint64(math.Round(opacity * 256))
	if w == 0 || values == nil || g.Len() == 0 {
		copy(out.Pix, photo.Pix)
		return out
	}
	inv := 256 - w
	// patch rows on all cores (each writes its own pixel rows): a 5,120-patch page is 1.3
	// million pixels, composed on every hover while the view follows the pointer
	par.Ranges(g.Rows, 4, func(r0, r1 int) { ivComposeRows(out, photo, g, values, cm, sc, w, inv, r0, r1) })
	return out
}

// ivComposeRows blends patch rows [r0, r1) (see ivCompose).
func ivComposeRows(out, photo *image.RGBA, g PatchGrid, values []float32, cm Colormap, sc Scale, w, inv uint64, r0, r1 int) {
	W, H := out.Rect.Dx(), out.Rect.Dy()
	for r := r0; r < r1; r++ {
		y0, y1 := r*H/g.Rows, (r+1)*H/g.Rows
		for c := 0; c < g.Cols; c++ {
			x0, x1 := c*W/g.Cols, (c+1)*W/g.Cols
			s := g.At(r, c)
			col := color.NRGBA{}
			if s < len(values) {
				col = cm.At(sc.Norm(values[s]))
			}
			// four 16-bit lanes R, B, G, A (see ivBlendRow), each colour*w + 128 for rounding
			cterm := (uint64(col.R)*w + 128) | (uint64(col.B)*w+128)<<16 |
				(uint64(col.G)*w+128)<<32 | (255*w+128)<<48
			for y := y0; y < y1; y++ {
				o := y*out.Stride + x0*4
				n := (x1 - x0) * 4
				if col.A == 0 {
					copy(out.Pix[o:o+n], photo.Pix[o:o+n])
				} else {
					ivBlendRow(out.Pix[o:o+n], photo.Pix[o:o+n], inv, cterm)
				}
			}
		}
	}
}

// ivBlendRow sets dst = (src*inv + cterm) >> 8 per channel, for RGBA rows. A pixel is spread
// into 16-bit lanes R|B<<16|G<<32|A<<48 so one multiply scales all four channels: each lane
// stays below 255*256 + 128 < 65536, so lanes never carry into each other. Two pixels a step.
func ivBlendRow(dst, src []byte, inv, cterm uint64) {
	one := func(p uint64) uint64 {
		x := (p & 0x00ff00ff) | (p&0xff00ff00)<<24
		x = ((x*inv + cterm) >> 8) & 0x00ff00ff00ff00ff
		return uint64(uint32(x | x>>24))
	}
	n := min(len(src), len(dst)) &^ 3
	i := 0
	for ; i+8 <= n; i += 8 {
		q := binary.LittleEndian.Uint64(src[i : i+8 : i+8])
		binary.LittleEndian.PutUint64(dst[i:i+8:i+8], one(q&0xffffffff)|one(q>>32)<<32)
	}
	if i < n {
		binary.LittleEndian.PutUint32(dst[i:i+4:i+4], uint32(one(uint64(binary.LittleEndian.Uint32(src[i:i+4:i+4])))))
	}
}

// ivBlendRect blends a straight-alpha colour over r (clipped).
func ivBlendRect(img *image.RGBA, r image.Rectangle, col color.NRGBA) {
	r = r.Intersect(img.Rect)
	a := uint32(col.A)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := img.PixOffset(x, y)
			p := img.Pix[i : i+4 : i+4]
			p[0] = uint8((uint32(p[0])*(255-a) + uint32(col.R)*a + 127) / 255)
			p[1] = uint8((uint32(p[1])*(255-a) + uint32(col.G)*a + 127) / 255)
			p[2] = uint8((uint32(p[2])*(255-a) + uint32(col.B)*a + 127) / 255)
			p[3] = uint8((uint32(p[3])*(255-a) + 255*a + 127) / 255)
		}
	}
}

// ivBand paints the frame of width t just inside r.
func ivBand(img *image.RGBA, r image.Rectangle, t int, col color.NRGBA) {
	if r.Dx() <= 2*t || r.Dy() <= 2*t {
		ivBlendRect(img, r, col)
		return
	}
	ivBlendRect(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), col)
	ivBlendRect(img, image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), col)
	ivBlendRect(img, image.Rect(r.Min.X, r.Min.Y+t, r.Min.X+t, r.Max.Y-t), col)
	ivBlendRect(img, image.Rect(r.Max.X-t, r.Min.Y+t, r.Max.X, r.Max.Y-t), col)
}

// ivDrawBadge writes a small white number on black at the top-left inside pr, when it fits.
func ivDrawBadge(img *image.RGBA, pr image.Rectangle, s string) {
	face := basicfont.Face7x13
	w := 7*len(s) + 2
	if pr.Dx() < w+2 || pr.Dy() < 14 {
		return
	}
	box := image.Rect(pr.Min.X+1, pr.Min.Y+1, pr.Min.X+1+w, pr.Min.Y+13)
	ivBlendRect(img, box, ivBadgeBg)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.White), Face: face,
		Dot: fixed.P(box.Min.X+1, box.Min.Y+10)}
	d.DrawString(s)
}

// ivDefaultHoverLocked is the hover text without SetHoverText.
func (v *ImageView) ivDefaultHoverLocked(p int) string {
	rc := v.rasterOf[p]
	s := fmt.Sprintf("r %d  c %d  seq %d", rc/v.grid.Cols, rc%v.grid.Cols, p)
	if p < len(v.values) {
		s += ":  " + legendFormatValue(v.values[p])
	}
	return s
}

// Tapped selects the patch under the pointer and calls OnSelect; a tap in the letterbox
// does nothing.
func (v *ImageView) Tapped(ev *fyne.PointEvent) {
	p := v.PatchAt(ev.Position)
	if p < 0 {
		return
	}
	v.SetSelected(p)
	if f := v.OnSelect; f != nil {
		f(p)
	}
}

// Dragged outlines the rectangle of patches from where the drag began to the pointer (see
// OnDragRect).
func (v *ImageView) Dragged(ev *fyne.DragEvent) {
	if v.OnDragRect == nil {
		return
	}
	v.mu.Lock()
	geo := ivGeometry(v.Size(), v.photoW(), v.photoH(), v.grid, ivCanvasScale(v))
	if !geo.ok {
		v.mu.Unlock()
		return
	}
	if !v.dragging {
		start := ev.Position.Subtract(ev.Dragged)
		v.dragging, v.dragFrom = true, geo.clampedCell(start)
	}
	to := geo.clampedCell(ev.Position)
	v.region = image.Rect(min(v.dragFrom[1], to[1]), min(v.dragFrom[0], to[0]), max(v.dragFrom[1], to[1])+1, max(v.dragFrom[0], to[0])+1)
	v.dirty |= ivDirtyDeco
	v.mu.Unlock()
	v.Refresh()
}

// DragEnd hands the outlined rectangle to OnDragRect.
func (v *ImageView) DragEnd() {
	v.mu.Lock()
	r, was := v.region, v.dragging
	v.dragging = false
	v.mu.Unlock()
	if f := v.OnDragRect; was && f != nil {
		f(r)
	}
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

// MouseIn implements desktop.Hoverable.
func (v *ImageView) MouseIn(ev *desktop.MouseEvent) { v.ivPointer(ev.Position, true, ev.Modifier) }

// MouseMoved implements desktop.Hoverable.
func (v *ImageView) MouseMoved(ev *desktop.MouseEvent) {
	v.ivPointer(ev.Position, true, ev.Modifier)
}

// MouseOut implements desktop.Hoverable.
func (v *ImageView) MouseOut() { v.ivPointer(fyne.Position{}, false, 0) }

func (v *ImageView) ivPointer(pos fyne.Position, in bool, mods fyne.KeyModifier) {
	now := time.Now()
	v.mu.Lock()
	p := -1
	if in {
		p = v.ivPatchAtLocked(pos, v.Size())
	}
	changed := p != v.hovered
	if changed && p >= 0 {
		v.movedAt = now
	}
	modsChanged := mods != v.mods
	v.hovered, v.pointer, v.pointerIn, v.mods = p, pos, in, mods
	v.dirty |= ivDirtyHover
	v.mu.Unlock()
	if changed {
		v.ivUpdateTip()
	} else {
		v.Refresh()
	}
	if f := v.OnHover; changed && f != nil {
		f(p)
	}
	if f := v.OnHoverMods; (changed || modsChanged) && f != nil {
		f(p, mods)
	}
}

// Hovered is the patch under the pointer, -1 for none.
func (v *ImageView) Hovered() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.hovered
}

// ivUpdateTip recomputes the hover text; the user's function runs without the lock held.
func (v *ImageView) ivUpdateTip() {
	v.mu.Lock()
	p, f := v.hovered, v.hoverText
	text := ""
	if p >= 0 && f == nil {
		text = v.ivDefaultHoverLocked(p)
	}
	v.mu.Unlock()
	if p >= 0 && f != nil {
		text = f(p)
	}
	v.mu.Lock()
	if v.hovered == p {
		v.tip = text
	}
	v.dirty |= ivDirtyHover
	v.mu.Unlock()
	v.Refresh()
}

// MinSize keeps the view usable in a narrow side panel.
func (v *ImageView) MinSize() fyne.Size {
	v.ExtendBaseWidget(v)
	return fyne.NewSize(320, 200)
}

// CreateRenderer implements fyne.Widget.
func (v *ImageView) CreateRenderer() fyne.WidgetRenderer {
	v.ExtendBaseWidget(v)
	r := &ivRenderer{v: v}
	r.bg = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	r.img = &canvas.Image{FillMode: canvas.ImageFillStretch, ScaleMode: canvas.ImageScaleFastest}
	// one pixel per patch, stretched with nearest sampling: each texel covers its patch
	r.ov = &canvas.Image{FillMode: canvas.ImageFillStretch, ScaleMode: canvas.ImageScalePixels}
	r.frame = canvas.NewRaster(r.framePainted)
	r.empty = canvas.NewText("No image", theme.Color(theme.ColorNamePlaceHolder))
	r.empty.Alignment = fyne.TextAlignCenter
	r.sel = ivNewFrames(ivHaloColor, ivSelectColor)
	r.region = ivNewFrames(ivHaloColor, ivRegionColor)
	r.hover = ivNewFrames(ivHaloColor, ivHoverColor)
	r.tipBg = canvas.NewRectangle(ivTipBgColor)
	r.tipBg.CornerRadius = 4
	r.tipText = canvas.NewText("", ivTipFgColor)
	r.tipText.TextStyle = fyne.TextStyle{Monospace: true}
	r.tipText.TextSize = theme.CaptionTextSize()
	v.mu.Lock()
	v.dirty = 0 // the first Refresh below rebuilds everything
	v.mu.Unlock()
	r.Refresh()
	return r
}

// ivFrames is a two-colour outline: a halo band under a thinner bright band.
type ivFrames struct{ halo, line [4]*canvas.Rectangle }

func ivNewFrames(halo, line color.Color) *ivFrames {
	f := &ivFrames{}
	for i := range 4 {
		f.halo[i] = canvas.NewRectangle(halo)
		f.line[i] = canvas.NewRectangle(line)
	}
	return f
}

func (f *ivFrames) objects() []fyne.CanvasObject {
	out := make([]fyne.CanvasObject, 0, 8)
	for _, r := range f.halo {
		out = append(out, r)
	}
	for _, r := range f.line {
		out = append(out, r)
	}
	return out
}

func (f *ivFrames) show(on bool) {
	for i := range 4 {
		f.halo[i].Hidden, f.line[i].Hidden = !on, !on
	}
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

func (f *ivFrames) refresh() {
	for i := range 4 {
		f.halo[i].Refresh()
		f.line[i].Refresh()
	}
}

type ivMark struct {
	frames *ivFrames
	badge  *canvas.Rectangle
	label  *canvas.Text
}

type ivRenderer struct {
	v       *ImageView
	bg      *canvas.Rectangle
	img     *canvas.Image  // the photo: uploaded once per page
	ov      *canvas.Image  // the overlay: Cols x Rows texels over the photo
	frame   *canvas.Raster // drawn last, 1x1 and clear: its paint marks the frame's (OnFrame)
	empty   *canvas.Text
	lines   []*canvas.Rectangle // grid lines: Cols-1 vertical, then Rows-1 horizontal
	marks   []ivMark
	sel     *ivFrames
	region  *ivFrames // SetRegion's outline
	hover   *ivFrames
	tipBg   *canvas.Rectangle
	tipText *canvas.Text
	objects []fyne.CanvasObject
}

func (r *ivRenderer) Destroy() {}

func (r *ivRenderer) MinSize() fyne.Size { return r.v.MinSize() }

func (r *ivRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *ivRenderer) Layout(size fyne.Size) {
	r.v.mu.Lock()
	r.layoutLocked(size)
	r.v.mu.Unlock()
}

// Refresh applies what changed: a new composed image, rebuilt decorations, the hover parts.
// A plain Refresh (theme change) redoes everything.
func (r *ivRenderer) Refresh() {
	v := r.v
	v.mu.Lock()
	d := v.dirty
	v.dirty = 0
	if d == 0 {
		d = ivDirtyImage | ivDirtyDeco | ivDirtyHover
		r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
		r.empty.Color = theme.Color(theme.ColorNamePlaceHolder)
		r.tipText.TextSize = theme.CaptionTextSize()
	}
	if d&ivDirtyImage != 0 {
		r.img.Image = nil
		if v.photo != nil {
			r.img.Image = v.photo
		}
	}
	if d&ivDirtyOverlay != 0 {
		r.ov.Image = nil
		if v.overlay != nil {
			r.ov.Image = v.overlay
		}
		r.ov.Translucency = 1 - v.opacity
	}
	timed := !v.frameFor.IsZero() && d&ivDirtyOverlay != 0
	if d&ivDirtyDeco != 0 {
		r.rebuildLocked()
	}
	r.layoutLocked(v.Size())
	v.mu.Unlock()

	if d&ivDirtyImage != 0 {
		r.img.Refresh()
	}
	if d&ivDirtyOverlay != 0 {
		r.ov.Refresh()
	}
	if timed {
		r.frame.Refresh() // repainted in the frame that shows the new overlay
	}
	if d&^ivDirtyHover != 0 {
		canvas.Refresh(v)
		return
	}
	r.hover.refresh()
	r.tipBg.Refresh()
	r.tipText.Refresh()
}

// rebuildLocked makes the grid-line and mark objects match the state.
func (r *ivRenderer) rebuildLocked() {
	v := r.v
	nl := 0
	if v.showGrid && v.rasterOf != nil {
		nl = v.grid.Cols - 1 + v.grid.Rows - 1
	}
	for len(r.lines) < nl {
		r.lines = append(r.lines, canvas.NewRectangle(ivGridColor))
	}
	r.lines = r.lines[:nl]
	nm := 0
	for _, p := range v.marked {
		if p >= 0 && p < len(v.rasterOf) {
			nm++
		}
	}
	for len(r.marks) < nm {
		lb := canvas.NewText("", color.White)
		lb.TextStyle = fyne.TextStyle{Bold: true}
		lb.Alignment = fyne.TextAlignCenter
		bg := canvas.NewRectangle(ivBadgeBg)
		bg.CornerRadius = 2
		r.marks = append(r.marks, ivMark{frames: ivNewFrames(ivHaloColor, ivMarkColor), badge: bg, label: lb})
	}
	r.marks = r.marks[:nm]

	objs := []fyne.CanvasObject{r.bg, r.img, r.ov, r.empty}
	for _, l := range r.lines {
		objs = append(objs, l)
	}
	objs = append(objs, r.region.objects()...)
	objs = append(objs, r.hover.objects()...)
	for _, m := range r.marks {
		objs = append(objs, m.frames.objects()...)
	}
	for _, m := range r.marks {
		objs = append(objs, m.badge, m.label)
	}
	objs = append(objs, r.sel.objects()...)
	objs = append(objs, r.tipBg, r.tipText, r.frame)
	r.objects = objs
}

// framePainted is the frame marker's raster: called when a frame paints it again, which
// Refresh asks for with a new overlay that a hover waits for. It reports the hover's time to
// this paint (OnFrame) and draws nothing.
func (r *ivRenderer) framePainted(w, h int) image.Image {
	v := r.v
	v.mu.Lock()
	at, report := v.frameFor, v.OnFrame
	v.frameFor = time.Time{}
	v.mu.Unlock()
	if !at.IsZero() && report != nil {
		report(time.Since(at))
	}
	return image.NewNRGBA(image.Rect(0, 0, max(w, 1), max(h, 1)))
}

// layoutLocked places every object for the widget size.
func (r *ivRenderer) layoutLocked(size fyne.Size) {
	v := r.v
	r.bg.Move(fyne.Position{})
	r.bg.Resize(size)
	r.empty.Hidden = v.photo != nil
	r.empty.Move(fyne.Position{})
	r.empty.Resize(size)
	r.frame.Move(fyne.Position{})
	r.frame.Resize(fyne.NewSize(1, 1))
	r.ov.Hidden = true
	if v.photo == nil {
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
		return
	}
	g := v.grid
	geo := ivGeometry(size, v.photo.Rect.Dx(), v.photo.Rect.Dy(), g, ivCanvasScale(v))
	if !geo.ok {
		// no valid grid (or no room): the photo alone, letterboxed
		g = PatchGrid{}
		geo = ivGeometry(size, v.photo.Rect.Dx(), v.photo.Rect.Dy(), PatchGrid{Rows: 1, Cols: 1}, ivCanvasScale(v))
	}
	r.img.Hidden = !geo.ok
	if !geo.ok {
		return
	}
	o, s := geo.image()
	r.img.Move(o)
	r.img.Resize(s)
	r.ov.Hidden = v.overlay == nil || g.Len() == 0
	r.ov.Move(o)
	r.ov.Resize(s)
	u := geo.unit
	// cell returns the screen rectangle of sequence index p.
	cell := func(p int) (x0, y0, x1, y1 float32) {
		return geo.cell(v.rasterOf[p]/g.Cols, v.rasterOf[p]%g.Cols)
	}

	li := 0
	for c := 1; c < g.Cols && li < len(r.lines); c++ {
		l := r.lines[li]
		l.Hidden = false
		l.Move(fyne.NewPos(geo.xs[c], o.Y))
		l.Resize(fyne.NewSize(u, s.Height))
		li++
	}
	for rr := 1; rr < g.Rows && li < len(r.lines); rr++ {
		l := r.lines[li]
		l.Hidden = false
		l.Move(fyne.NewPos(o.X, geo.ys[rr]))
		l.Resize(fyne.NewSize(s.Width, u))
		li++
	}

	mi := 0
	badgeSize := max(theme.CaptionTextSize()-2, 8)
	for i, p := range v.marked {
		if p < 0 || p >= len(v.rasterOf) || mi >= len(r.marks) {
			continue
		}
		m := r.marks[mi]
		mi++
		x0, y0, x1, y1 := cell(p)
		m.frames.show(true)
		// black band over the patch edge, cyan line one unit inside
		m.frames.place(x0+u, y0+u, x1-u, y1-u, u, 3*u, u)
		m.label.Text = fmt.Sprint(i + 1)
		m.label.TextSize = badgeSize
		ts := m.label.MinSize()
		m.badge.Hidden, m.label.Hidden = false, false
		bs := fyne.NewSize(float32(math.Ceil(float64((ts.Width+4*u)/u)))*u, float32(math.Ceil(float64(ts.Height/u)))*u)
		m.badge.Move(fyne.NewPos(x0+u, y0+u))
		m.badge.Resize(bs)
		m.label.Move(fyne.NewPos(x0+u, y0+u))
		m.label.Resize(bs)
	}

	if p := v.selected; p >= 0 && p < len(v.rasterOf) {
		x0, y0, x1, y1 := cell(p)
		r.sel.show(true)
		r.sel.place(x0, y0, x1, y1, u, 4*u, 2*u)
	} else {
		r.sel.show(false)
	}
	if rr := v.region.Intersect(image.Rect(0, 0, g.Cols, g.Rows)); !rr.Empty() && g.Len() > 0 {
		x0, y0, _, _ := geo.cell(rr.Min.Y, rr.Min.X)
		_, _, x1, y1 := geo.cell(rr.Max.Y-1, rr.Max.X-1)
		r.region.show(true)
		r.region.place(x0, y0, x1, y1, u, 3*u, u)
	} else {
		r.region.show(false)
	}

	if p := v.hovered; p >= 0 && p < len(v.rasterOf) && v.pointerIn {
		x0, y0, x1, y1 := cell(p)
		r.hover.show(true)
		r.hover.place(x0, y0, x1, y1, u, 2*u, u)
		text := v.tip
		r.tipText.Text = text
		ts := r.tipText.MinSize()
		pad := fyne.NewSize(8, 4)
		bs := fyne.NewSize(ts.Width+2*pad.Width, ts.Height+2*pad.Height)
		pos := v.pointer.AddXY(14, 18)
		if pos.X+bs.Width > size.Width {
			pos.X = v.pointer.X - bs.Width - 6
		}
		if pos.Y+bs.Height > size.Height {
			pos.Y = v.pointer.Y - bs.Height - 6
		}
		pos.X, pos.Y = max(pos.X, 0), max(pos.Y, 0)
		r.tipBg.Hidden, r.tipText.Hidden = text == "", text == ""
		r.tipBg.Move(pos)
		r.tipBg.Resize(bs)
		r.tipText.Move(pos.AddXY(pad.Width, pad.Height))
		r.tipText.Resize(ts)
	} else {
		r.hover.show(false)
		r.tipBg.Hidden, r.tipText.Hidden = true, true
	}
}

var (
	_ fyne.Tappable     = (*ImageView)(nil)
	_ desktop.Hoverable = (*ImageView)(nil)
)
