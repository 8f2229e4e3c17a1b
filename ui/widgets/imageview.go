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
//
// The widget is split by concern, as fyne-io/terminal splits its own: this file is its face
// (the state, behind one mutex, and its setters); imageview_render.go the renderer (which
// canvas objects exist, what a Refresh uploads); imageview_layout.go where everything lies
// on screen (the letterboxed geometry, snapped to device pixels, shared by layout and
// input); imageview_input.go the pointer (taps, drags, hover, its tooltip);
// imageview_overlay.go the overlay's pixels (the per-patch texture, the composed page and
// the decorations the exports draw). patchgrid.go says how patches tile the image.
package widgets

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

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

// MinSize keeps the view usable in a narrow side panel.
func (v *ImageView) MinSize() fyne.Size {
	v.ExtendBaseWidget(v)
	return fyne.NewSize(320, 200)
}
