// This file keeps one invariant: applyOrientation(img, o) equals what PIL's
// ImageOps.exif_transpose does for EXIF orientation o: 2 FLIP_LEFT_RIGHT,
// 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270 (90 degrees
// clockwise), 7 TRANSVERSE, 8 ROTATE_90 (90 degrees counter-clockwise).
// Mutation that would silently break it: swapping the rows for 6 and 8
// still yields a W/H swap with plausible-looking output, but upside down.
package imageproc

import "github.com/turbospark/inspector/internal/par"

// orientMap gives, for an output pixel (x, y), its source pixel index
// o0 + x*dx + y*dy in units of source pixels; the fields are coefficients
// of W-1, H-1 and the source width W for o0, dx and dy.
type orientMap struct {
	swap                   bool // output is H x W
	o0w, o0h               int  // o0 = o0w*(W-1) + o0h*(H-1)*W
	dxOne, dxW, dyOne, dyW int
}

var orientMaps = [9]orientMap{
	1: {dxOne: 1, dyW: 1},
	2: {o0w: 1, dxOne: -1, dyW: 1},
	3: {o0w: 1, o0h: 1, dxOne: -1, dyW: -1},
	4: {o0h: 1, dxOne: 1, dyW: -1},
	5: {swap: true, dxW: 1, dyOne: 1},
	6: {swap: true, o0h: 1, dxW: -1, dyOne: 1},
	7: {swap: true, o0w: 1, o0h: 1, dxW: -1, dyOne: -1},
	8: {swap: true, o0w: 1, dxW: 1, dyOne: -1},
}

// applyOrientation returns img transposed for EXIF orientation o; 1 and
// out-of-range values return img unchanged.
func applyOrientation(img *RGB, o int) *RGB {
	if o <= 1 || o > 8 {
		return img
	}
	m := orientMaps[o]
	W, H := img.W, img.H
	out := &RGB{W: W, H: H, Note: img.Note}
	if m.swap {
		out.W, out.H = H, W
	}
	out.Pix = make([]uint8, len(img.Pix))
	o0 := m.o0w*(W-1) + m.o0h*(H-1)*W
	dx, dy := m.dxOne+m.dxW*W, m.dyOne+m.dyW*W
	par.Ranges(out.H, 64, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			s := o0 + y*dy
			row := out.Pix[y*out.W*3 : (y+1)*out.W*3]
			for x := range out.W {
				copy(row[x*3:x*3+3], img.Pix[s*3:s*3+3])
				s += dx
			}
		}
	})
	return out
}
