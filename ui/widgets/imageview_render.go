// imageview_render.go: the image view's renderer — which canvas objects exist (the photo,
// the overlay's texture, the grid lines, the outlines, the marks, the tooltip, the frame
// marker) and what a Refresh hands the canvas: only what changed (the dirty bits the setters
// leave), so a hover repaints its outline and tooltip and a new map uploads Cols x Rows
// texels, not the page. Where each object lies is imageview_layout.go's. Invariant: the
// renderer reads the widget's state only under its mutex, and nothing calls the widget's
// Refresh with that mutex held (ivLocked): Refresh runs this renderer's Refresh, which takes
// it, and a sync.Mutex is not re-entrant. The mutation that would break it: a setter that
// calls Refresh inside its locked section — the UI goroutine then waits on itself.
package widgets

import (
	"image"
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
)

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
	r.tipBg, r.tipText = ivNewTip()
	v.mu.Lock()
	v.dirty = 0 // the first Refresh below rebuilds everything
	v.mu.Unlock()
	r.Refresh()
	return r
}

// ivNewTip makes the hover tooltip: light monospace text on a dark rounded box.
func ivNewTip() (*canvas.Rectangle, *canvas.Text) {
	bg := canvas.NewRectangle(ivTipBgColor)
	bg.CornerRadius = 4
	text := canvas.NewText("", ivTipFgColor)
	text.TextStyle = fyne.TextStyle{Monospace: true}
	text.TextSize = theme.CaptionTextSize()
	return bg, text
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
	d := r.takeDirtyLocked()
	r.applyPicturesLocked(d)
	timed := !v.frameFor.IsZero() && d&ivDirtyOverlay != 0
	if d&ivDirtyDeco != 0 {
		r.rebuildLocked()
	}
	r.layoutLocked(v.Size())
	v.mu.Unlock()
	r.refreshChanged(d, timed)
}

// takeDirtyLocked is what changed since the last Refresh, and clears it; nothing marked
// (a plain Refresh: the theme changed) is everything, with the theme's colours taken again.
func (r *ivRenderer) takeDirtyLocked() ivDirty {
	v := r.v
	d := v.dirty
	v.dirty = 0
	if d == 0 {
		d = ivDirtyImage | ivDirtyDeco | ivDirtyHover
		r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
		r.empty.Color = theme.Color(theme.ColorNamePlaceHolder)
		r.tipText.TextSize = theme.CaptionTextSize()
	}
	return d
}

// applyPicturesLocked hands the canvas images the photo and the overlay that changed (d),
// and the overlay's opacity as the images' translucency.
func (r *ivRenderer) applyPicturesLocked(d ivDirty) {
	v := r.v
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
}

// refreshChanged asks the canvas to repaint what changed (d): the images uploaded again, the
// whole widget for decorations, only the hover parts for a pointer move. timed: the frame
// marker is repainted in the frame that shows the new overlay (OnFrame).
func (r *ivRenderer) refreshChanged(d ivDirty, timed bool) {
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
		canvas.Refresh(r.v)
		return
	}
	r.hover.refresh()
	r.tipBg.Refresh()
	r.tipText.Refresh()
}

// rebuildLocked makes the grid-line and mark objects match the state.
func (r *ivRenderer) rebuildLocked() {
	r.sizeLinesLocked()
	r.sizeMarksLocked()
	r.objects = r.collectObjects()
}

// sizeLinesLocked keeps one rectangle per grid line: Cols-1 + Rows-1 while the grid is shown
// (and valid), none otherwise.
func (r *ivRenderer) sizeLinesLocked() {
	v := r.v
	nl := 0
	if v.showGrid && v.rasterOf != nil {
		nl = v.grid.Cols - 1 + v.grid.Rows - 1
	}
	for len(r.lines) < nl {
		r.lines = append(r.lines, canvas.NewRectangle(ivGridColor))
	}
	r.lines = r.lines[:nl]
}

// sizeMarksLocked keeps one mark (frame, badge, number) per marked patch of the grid.
func (r *ivRenderer) sizeMarksLocked() {
	v := r.v
	nm := 0
	for _, p := range v.marked {
		if p >= 0 && p < len(v.rasterOf) {
			nm++
		}
	}
	for len(r.marks) < nm {
		r.marks = append(r.marks, ivNewMark())
	}
	r.marks = r.marks[:nm]
}

// ivNewMark is a numbered mark: a cyan frame over a black halo, a bold white number on a
// dark badge.
func ivNewMark() ivMark {
	lb := canvas.NewText("", color.White)
	lb.TextStyle = fyne.TextStyle{Bold: true}
	lb.Alignment = fyne.TextAlignCenter
	bg := canvas.NewRectangle(ivBadgeBg)
	bg.CornerRadius = 2
	return ivMark{frames: ivNewFrames(ivHaloColor, ivMarkColor), badge: bg, label: lb}
}

// collectObjects is every object in paint order: the photo and overlay, the grid, the
// region and hover outlines, the marks' frames, then their badges, the selection, the
// tooltip, and the frame marker last.
func (r *ivRenderer) collectObjects() []fyne.CanvasObject {
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
	return append(objs, r.tipBg, r.tipText, r.frame)
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
