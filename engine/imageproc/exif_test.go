// EXIF orientation tests. Invariant checked: Decode applies PIL's
// exif_transpose for orientations 1..8 read from JPEG APP1 (II and MM),
// PNG eXIf, WebP EXIF and TIFF IFD0. The expected images are built by
// composing transpose and flips, independently of orient.go's table.
package imageproc

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"testing"
)

// blockPalette are 8 well separated colours, one per 16x16 block of a 4x2
// block image (16x16 so JPEG 4:2:0 chroma stays inside a block).
var blockPalette = [8][3]uint8{
	{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 0},
	{0, 255, 255}, {255, 0, 255}, {255, 255, 255}, {0, 0, 0},
}

const blk = 16

// blockGrid is a small image of palette indices; orientation references
// are computed on it.
type blockGrid struct {
	w, h int
	v    []int
}

func (g blockGrid) at(x, y int) int { return g.v[y*g.w+x] }

func (g blockGrid) transpose() blockGrid {
	o := blockGrid{g.h, g.w, make([]int, len(g.v))}
	for y := range o.h {
		for x := range o.w {
			o.v[y*o.w+x] = g.at(y, x)
		}
	}
	return o
}

func (g blockGrid) flipH() blockGrid {
	o := blockGrid{g.w, g.h, make([]int, len(g.v))}
	for y := range g.h {
		for x := range g.w {
			o.v[y*g.w+x] = g.at(g.w-1-x, y)
		}
	}
	return o
}

func (g blockGrid) flipV() blockGrid { return g.transpose().flipH().transpose() }

// expectedOrientation is PIL's exif_transpose on a block grid.
func expectedOrientation(g blockGrid, o int) blockGrid {
	switch o {
	case 2:
		return g.flipH()
	case 3:
		return g.flipH().flipV()
	case 4:
		return g.flipV()
	case 5:
		return g.transpose()
	case 6: // rotate 90 clockwise
		return g.transpose().flipH()
	case 7:
		return g.transpose().flipH().flipV()
	case 8: // rotate 90 counter-clockwise
		return g.transpose().flipV()
	}
	return g
}

func baseGrid() blockGrid { return blockGrid{4, 2, []int{0, 1, 2, 3, 4, 5, 6, 7}} }

func gridImage(g blockGrid) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, g.w*blk, g.h*blk))
	for y := range g.h * blk {
		for x := range g.w * blk {
			c := blockPalette[g.at(x/blk, y/blk)]
			img.SetNRGBA(x, y, color.NRGBA{c[0], c[1], c[2], 255})
		}
	}
	return img
}

// tiffWithOrientation is a TIFF structure holding IFD0 with a dummy tag
// (ImageDescription offset junk) followed by Orientation.
func tiffWithOrientation(bigEndian bool, o int) []byte {
	var bo byteOrder = binary.LittleEndian
	b := []byte("II*\x00")
	if bigEndian {
		bo, b = binary.BigEndian, []byte("MM\x00*")
	}
	b = bo.AppendUint32(b, 8)
	b = bo.AppendUint16(b, 2)
	b = appendIFDEntry(b, bo, 0x010F, 2, 4, 0x41424300) // Make "ABC"
	b = appendIFDEntry(b, bo, orientationTag, 3, 1, 0)
	bo.PutUint16(b[len(b)-4:], uint16(o))
	return bo.AppendUint32(b, 0)
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func appendIFDEntry(b []byte, bo byteOrder, tag, typ uint16, count, val uint32) []byte {
	b = bo.AppendUint16(b, tag)
	b = bo.AppendUint16(b, typ)
	b = bo.AppendUint32(b, count)
	return bo.AppendUint32(b, val)
}

// jpegWithExif encodes img and splices APP0 (JFIF) and APP1 (Exif) after SOI.
func jpegWithExif(t *testing.T, img image.Image, exif []byte) []byte {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	enc := buf.Bytes()
	out := append([]byte{}, enc[:2]...)
	app0 := []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
	out = append(out, 0xFF, 0xE0, 0, byte(len(app0)+2))
	out = append(out, app0...)
	if exif != nil {
		payload := append([]byte("Exif\x00\x00"), exif...)
		out = append(out, 0xFF, 0xE1)
		out = binary.BigEndian.AppendUint16(out, uint16(len(payload)+2))
		out = append(out, payload...)
	}
	return append(out, enc[2:]...)
}

// nearestBlock classifies the colour at the centre of block (bx, by).
func nearestBlock(img *RGB, bx, by int) (idx int, dist float64) {
	p := img.Pix[((by*blk+blk/2)*img.W+bx*blk+blk/2)*3:]
	dist = math.Inf(1)
	for i, c := range blockPalette {
		d := 0.0
		for k := range 3 {
			d += math.Abs(float64(p[k]) - float64(c[k]))
		}
		if d < dist {
			idx, dist = i, d
		}
	}
	return idx, dist
}

func checkBlocks(t *testing.T, label string, got *RGB, want blockGrid, maxDist float64) {
	t.Helper()
	if got.W != want.w*blk || got.H != want.h*blk {
		t.Fatalf("%s: size %dx%d, want %dx%d", label, got.W, got.H, want.w*blk, want.h*blk)
	}
	for by := range want.h {
		for bx := range want.w {
			idx, d := nearestBlock(got, bx, by)
			if idx != want.at(bx, by) || d > maxDist {
				t.Fatalf("%s: block (%d,%d) is colour %d (dist %.0f), want %d", label, bx, by, idx, d, want.at(bx, by))
			}
		}
	}
}

func TestJPEGExifOrientations(t *testing.T) {
	g := baseGrid()
	src := gridImage(g)
	for _, be := range []bool{false, true} {
		for o := 1; o <= 8; o++ {
			data := jpegWithExif(t, src, tiffWithOrientation(be, o))
			got, err := Decode(bytes.NewReader(data), "o.jpg", DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			checkBlocks(t, map[bool]string{false: "II", true: "MM"}[be]+" orientation "+string(rune('0'+o)),
				got, expectedOrientation(g, o), 60)
		}
	}
}

func TestJPEGWithoutOrInvalidExif(t *testing.T) {
	g := baseGrid()
	for _, exif := range [][]byte{nil, tiffWithOrientation(false, 0), tiffWithOrientation(true, 9), []byte("II*\x00\xff\xff\xff\xff")} {
		got, err := Decode(bytes.NewReader(jpegWithExif(t, gridImage(g), exif)), "x.jpg", DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		checkBlocks(t, "no/invalid exif", got, g, 60)
	}
}

// pngWithChunk encodes img as PNG and inserts a chunk right after IHDR.
func pngWithChunk(t *testing.T, img image.Image, typ string, data []byte) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	enc := buf.Bytes()
	const afterIHDR = 8 + 8 + 13 + 4
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, typ...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	out := append(append(append([]byte{}, enc[:afterIHDR]...), chunk...), enc[afterIHDR:]...)
	return out
}

func TestPNGExifOrientations(t *testing.T) {
	g := baseGrid()
	for o := 1; o <= 8; o++ {
		for _, prefix := range []string{"", "Exif\x00\x00"} {
			data := pngWithChunk(t, gridImage(g), "eXIf", append([]byte(prefix), tiffWithOrientation(o%2 == 0, o)...))
			got, err := Decode(bytes.NewReader(data), "o.png", DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			checkBlocks(t, "png orientation "+string(rune('0'+o)), got, expectedOrientation(g, o), 0)
		}
	}
}

func TestWebPAndTIFFOrientationParsing(t *testing.T) {
	riff := func(chunks ...[]byte) []byte {
		body := []byte("WEBP")
		for _, c := range chunks {
			body = append(body, c...)
		}
		return append(binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(len(body))), body...)
	}
	chunk := func(fourcc string, data []byte) []byte {
		c := binary.LittleEndian.AppendUint32([]byte(fourcc), uint32(len(data)))
		c = append(c, data...)
		if len(data)%2 == 1 {
			c = append(c, 0)
		}
		return c
	}
	for o := 1; o <= 8; o++ {
		w := riff(chunk("VP8X", make([]byte, 10)), chunk("ICCP", []byte{1, 2, 3}), chunk("EXIF", tiffWithOrientation(o > 4, o)))
		if got := exifOrientation(w, "webp"); got != o {
			t.Errorf("webp orientation %d read as %d", o, got)
		}
		if got := exifOrientation(tiffWithOrientation(o < 5, o), "tiff"); got != o {
			t.Errorf("tiff orientation %d read as %d", o, got)
		}
	}
	// truncated containers never panic and mean "no orientation"
	full := riff(chunk("EXIF", tiffWithOrientation(false, 6)))
	for n := range len(full) {
		if o := exifOrientation(full[:n], "webp"); o != 1 {
			t.Errorf("truncated webp (%d bytes) gave orientation %d", n, o)
		}
	}
}

func TestApplyOrientationPixelExact(t *testing.T) {
	img := testPattern(5, 3)
	g := blockGrid{5, 3, make([]int, 15)}
	for i := range g.v {
		g.v[i] = i
	}
	for o := 1; o <= 8; o++ {
		got := applyOrientation(img, o)
		want := expectedOrientation(g, o)
		if got.W != want.w || got.H != want.h {
			t.Fatalf("orientation %d: size %dx%d", o, got.W, got.H)
		}
		for i, src := range want.v {
			if !bytes.Equal(got.Pix[i*3:i*3+3], img.Pix[src*3:src*3+3]) {
				t.Fatalf("orientation %d: pixel %d is not source pixel %d", o, i, src)
			}
		}
	}
}
