// imageview_overlay.go: the overlay's pixels. The texture the GPU stretches over the photo
// (one pixel per patch, raster order), the composed page (photo + overlay, at the page's
// size, made only when asked for: OverlayImage, Snapshot, MapImage) and, for exports at any
// resolution, ComposeHeatmap and DecorateHeatmap. Invariant: the composed page is
// photo*(1-a) + colour*a per channel with a = opacity in steps of 1/256, exact at 0 and 1,
// and a patch without a value (missing, NaN) is the photo's pixels, copied. The mutation that
// would silently break it: blending an uncoloured patch with the zero colour (a transparent
// black at opacity a darkens the photo where nothing was measured).
package widgets

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/turbospark/inspector/internal/par"
)

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

// ivDecorate draws over out what the view draws over the composed page, in the view's order:
// the grid lines, the region, the numbered marks, the selection box on top.
func ivDecorate(out *image.RGBA, g PatchGrid, rasterOf []int, showGrid bool, marked []int, selected int, region image.Rectangle) {
	if showGrid && rasterOf != nil {
		ivDecorateGrid(out, g)
	}
	if rr := region.Intersect(image.Rect(0, 0, g.Cols, g.Rows)); !rr.Empty() && rasterOf != nil {
		ivDecorateRegion(out, g, rr)
	}
	for i, p := range marked {
		if p < 0 || p >= len(rasterOf) {
			continue
		}
		ivDecorateMark(out, ivSeqRect(out, g, rasterOf, p), i+1)
	}
	if p := selected; p >= 0 && p < len(rasterOf) {
		ivDecorateSelection(out, ivSeqRect(out, g, rasterOf, p))
	}
}

// ivDecorateGrid draws the thin lines between patches.
func ivDecorateGrid(out *image.RGBA, g PatchGrid) {
	W, H := out.Rect.Dx(), out.Rect.Dy()
	for c := 1; c < g.Cols; c++ {
		ivBlendRect(out, image.Rect(c*W/g.Cols, 0, c*W/g.Cols+1, H), ivGridColor)
	}
	for r := 1; r < g.Rows; r++ {
		ivBlendRect(out, image.Rect(0, r*H/g.Rows, W, r*H/g.Rows+1), ivGridColor)
	}
}

// ivDecorateRegion outlines the patches of columns rr.Min.X..rr.Max.X-1 and rows
// rr.Min.Y..rr.Max.Y-1 (SetRegion's rectangle, inside the grid).
func ivDecorateRegion(out *image.RGBA, g PatchGrid, rr image.Rectangle) {
	W, H := out.Rect.Dx(), out.Rect.Dy()
	box := ivPatchRect(g, W, H, rr.Min.Y, rr.Min.X).Union(ivPatchRect(g, W, H, rr.Max.Y-1, rr.Max.X-1))
	ivBand(out, box, 2, ivHaloColor)
	ivBand(out, box.Inset(1), 1, ivRegionColor)
}

// ivDecorateMark frames the patch pr and writes its number n in it.
func ivDecorateMark(out *image.RGBA, pr image.Rectangle, n int) {
	ivBand(out, pr, 3, ivHaloColor)
	ivBand(out, pr.Inset(1), 1, ivMarkColor)
	ivDrawBadge(out, pr, fmt.Sprint(n))
}

// ivDecorateSelection draws the selection box around the patch pr.
func ivDecorateSelection(out *image.RGBA, pr image.Rectangle) {
	ivBand(out, pr.Inset(-1), 4, ivHaloColor)
	ivBand(out, pr, 2, ivSelectColor)
}

// ivSeqRect is the pixel rectangle of sequence index p in out.
func ivSeqRect(out *image.RGBA, g PatchGrid, rasterOf []int, p int) image.Rectangle {
	return ivPatchRect(g, out.Rect.Dx(), out.Rect.Dy(), rasterOf[p]/g.Cols, rasterOf[p]%g.Cols)
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
