// This file keeps one invariant: toRGB returns the colour channels as
// stored, like PIL's convert("RGB"): alpha is dropped, never composited and
// never un-premultiplied away from the stored value when the decoder kept
// it (NRGBA, NRGBA64, NYCbCrA, transparent palette entries).
// Mutation that would silently break it: reading pixels through
// img.At(x,y).RGBA() (premultiplied) turns a 50%-alpha red (255,0,0,128)
// into (128,0,0).
package imageproc

import (
	"image"
	"image/color"

	"github.com/turbospark/inspector/internal/par"
)

// gray16Note is what a user is told of a 16-bit gray image (see Decode).
const gray16Note = "a 16-bit gray image: the inspector takes each sample's high byte; PIL, and so transformers, " +
	"clips it instead (every sample from 256 up turns white), so transformers would see another image"

// toRGB converts any decoded image to interleaved 8-bit RGB.
func toRGB(img image.Image) *RGB {
	b := img.Bounds()
	out := &RGB{W: b.Dx(), H: b.Dy(), Pix: make([]uint8, b.Dx()*b.Dy()*3)}
	row := rowConverter(img)
	par.Ranges(out.H, 64, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			row(out.Pix[y*out.W*3:(y+1)*out.W*3], b.Min.X, b.Min.Y+y)
		}
	})
	return out
}

// rowConverter returns a function filling one output row (starting at
// image x0, image row y) for img's concrete type.
func rowConverter(img image.Image) func(dst []uint8, x0, y int) {
	switch m := img.(type) {
	case *image.NRGBA:
		return func(dst []uint8, x0, y int) { strided(dst, m.Pix[m.PixOffset(x0, y):], 4, 1) }
	case *image.RGBA:
		return func(dst []uint8, x0, y int) { premulRow(dst, m.Pix[m.PixOffset(x0, y):]) }
	case *image.NRGBA64:
		return func(dst []uint8, x0, y int) { strided(dst, m.Pix[m.PixOffset(x0, y):], 8, 2) }
	case *image.RGBA64:
		return func(dst []uint8, x0, y int) { premul64Row(dst, m.Pix[m.PixOffset(x0, y):]) }
	case *image.Gray:
		return func(dst []uint8, x0, y int) { grayRow(dst, m.Pix[m.PixOffset(x0, y):], 1) }
	case *image.Gray16: // the high byte, where PIL clips to 255 (see Decode)
		return func(dst []uint8, x0, y int) { grayRow(dst, m.Pix[m.PixOffset(x0, y):], 2) }
	case *image.Paletted:
		return palettedConverter(m)
	case *image.YCbCr:
		return func(dst []uint8, x0, y int) { ycbcrRow(dst, m, x0, y) }
	case *image.NYCbCrA:
		return func(dst []uint8, x0, y int) { ycbcrRow(dst, &m.YCbCr, x0, y) }
	case *image.CMYK:
		return func(dst []uint8, x0, y int) { cmykRow(dst, m.Pix[m.PixOffset(x0, y):]) }
	}
	return func(dst []uint8, x0, y int) {
		for i := range len(dst) / 3 {
			c := color.NRGBAModel.Convert(img.At(x0+i, y)).(color.NRGBA)
			dst[i*3], dst[i*3+1], dst[i*3+2] = c.R, c.G, c.B
		}
	}
}

// strided copies the first (high, for 16-bit big-endian) byte of the first
// three channels of each pixel of size step.
func strided(dst, src []uint8, step, chanBytes int) {
	for i := range len(dst) / 3 {
		p := src[i*step:]
		dst[i*3], dst[i*3+1], dst[i*3+2] = p[0], p[chanBytes], p[2*chanBytes]
	}
}

func grayRow(dst, src []uint8, step int) {
	for i := range len(dst) / 3 {
		v := src[i*step]
		dst[i*3], dst[i*3+1], dst[i*3+2] = v, v, v
	}
}

// premulRow recovers stored colour from premultiplied RGBA (exact when
// opaque, which is how Go's decoders use image.RGBA).
func premulRow(dst, src []uint8) {
	for i := range len(dst) / 3 {
		p := src[i*4 : i*4+4 : i*4+4]
		a := uint32(p[3])
		if a == 0xff || a == 0 {
			dst[i*3], dst[i*3+1], dst[i*3+2] = p[0], p[1], p[2]
			continue
		}
		dst[i*3] = uint8(uint32(p[0]) * 0xff / a)
		dst[i*3+1] = uint8(uint32(p[1]) * 0xff / a)
		dst[i*3+2] = uint8(uint32(p[2]) * 0xff / a)
	}
}

func premul64Row(dst, src []uint8) {
	for i := range len(dst) / 3 {
		p := src[i*8 : i*8+8 : i*8+8]
		a := uint32(p[6])<<8 | uint32(p[7])
		for c := range 3 {
			v := uint32(p[2*c])<<8 | uint32(p[2*c+1])
			if a != 0xffff && a != 0 {
				v = v * 0xffff / a
			}
			dst[i*3+c] = uint8(v >> 8)
		}
	}
}

func palettedConverter(m *image.Paletted) func(dst []uint8, x0, y int) {
	lut := make([][3]uint8, 256)
	for i, c := range m.Palette {
		n := color.NRGBAModel.Convert(c).(color.NRGBA)
		lut[i] = [3]uint8{n.R, n.G, n.B}
	}
	return func(dst []uint8, x0, y int) {
		src := m.Pix[m.PixOffset(x0, y):]
		for i := range len(dst) / 3 {
			c := lut[src[i]]
			dst[i*3], dst[i*3+1], dst[i*3+2] = c[0], c[1], c[2]
		}
	}
}

func ycbcrRow(dst []uint8, m *image.YCbCr, x0, y int) {
	for i := range len(dst) / 3 {
		yi, ci := m.YOffset(x0+i, y), m.COffset(x0+i, y)
		dst[i*3], dst[i*3+1], dst[i*3+2] = color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
	}
}

func cmykRow(dst, src []uint8) {
	for i := range len(dst) / 3 {
		p := src[i*4 : i*4+4 : i*4+4]
		dst[i*3], dst[i*3+1], dst[i*3+2] = color.CMYKToRGB(p[0], p[1], p[2], p[3])
	}
}
