// imageview_input.go: the pointer over the image. A tap selects the patch under it, a drag
// outlines a rectangle of patches (OnDragRect), a hover names the patch in a tooltip and
// reports it with the modifier keys held (OnHover, OnHoverMods). Invariant: the patch a
// pointer event names is the one drawn under it — input asks imageview_layout.go's geometry,
// the same snapped boundaries the renderer places the outlines on. The mutation that would
// silently break it: hit-testing against the unsnapped (or raster-order) cell — a click on a
// patch's edge pixel would select its neighbour, and on a merge-window grid another patch.
package widgets

import (
	"fmt"
	"image"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

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

// ivDefaultHoverLocked is the hover text without SetHoverText.
func (v *ImageView) ivDefaultHoverLocked(p int) string {
	rc := v.rasterOf[p]
	return PatchReadout(rc/v.grid.Cols, rc%v.grid.Cols, p, v.values)
}

// PatchReadout is how every image view names the patch under the pointer: "row 4 col 7
// (patch 125): 0.0123" (its value when values holds one): one wording in the main view and
// What if's maps alike.
func PatchReadout(row, col, patch int, values []float32) string {
	s := fmt.Sprintf("row %d col %d (patch %d)", row, col, patch)
	if patch < len(values) {
		s += fmt.Sprintf(": %.4g", values[patch])
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

var (
	_ fyne.Tappable     = (*ImageView)(nil)
	_ desktop.Hoverable = (*ImageView)(nil)
)
