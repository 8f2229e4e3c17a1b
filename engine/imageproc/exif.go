// This file keeps one invariant: exifOrientation finds the same EXIF
// Orientation (tag 0x0112 of IFD0) that PIL's getexif() sees: the first
// JPEG APP1 "Exif\0\0" segment, a PNG eXIf chunk (before or after IDAT), a
// WebP EXIF chunk or a TIFF file's own IFD0, in either byte order; anything
// missing, malformed or outside 1..8 means 1 (leave the image alone). It
// never panics on truncated input (every read is bounds-checked) and reads
// only the containers' headers and the EXIF block itself, at most
// maxExifBytes of it, never the image data between (a cursor skips them).
// Mutation that would silently break it: decoding the IFD with a fixed
// little-endian order makes every "MM" (big-endian) orientation 6 read as
// 1536, i.e. ignored, so phone pictures stay sideways.
package imageproc

import (
	"bytes"
	"encoding/binary"
	"io"
)

const orientationTag = 0x0112

// maxExifBytes is how much of an EXIF block is read: IFD0 and its
// orientation entry come first, so a longer block is read as its prefix.
const maxExifBytes = 1 << 20

var exifPrefix = []byte("Exif\x00\x00")

// exifOrientation returns the orientation stored in an encoded image of the
// given format (as named by image.Decode), or 1.
func exifOrientation(data []byte, format string) int {
	return exifOrientationAt(bytes.NewReader(data), int64(len(data)), format)
}

// exifOrientationAt is exifOrientation reading the first n bytes of ra.
func exifOrientationAt(ra io.ReaderAt, n int64, format string) int {
	c := &cursor{ra: ra, n: n}
	var o int
	switch format {
	case "jpeg":
		o = tiffOrientation(bytes.TrimPrefix(jpegExif(c), exifPrefix))
	case "png":
		o = tiffOrientation(bytes.TrimPrefix(pngExif(c), exifPrefix))
	case "webp":
		o = tiffOrientation(bytes.TrimPrefix(webpExif(c), exifPrefix))
	case "tiff":
		o = tiffOrientationAt(c)
	}
	if o < 1 || o > 8 {
		return 1
	}
	return o
}

// cursor reads small pieces of the first n bytes of ra through a window, so
// walking many short segments costs few reads and skipping costs none.
type cursor struct {
	ra     io.ReaderAt
	n      int64
	win    []byte
	winOff int64
}

// at returns the k bytes at off, or nil if they are not all there. The slice
// is valid until the next call.
func (c *cursor) at(off, k int64) []byte {
	if off < 0 || k < 0 || off > c.n-k {
		return nil
	}
	if off >= c.winOff && off+k <= c.winOff+int64(len(c.win)) {
		return c.win[off-c.winOff : off-c.winOff+k]
	}
	size := min(max(k, 64<<10), c.n-off)
	if int64(cap(c.win)) < size {
		c.win = make([]byte, size)
	}
	m, _ := c.ra.ReadAt(c.win[:size], off)
	c.win, c.winOff = c.win[:m], off
	if int64(m) < k {
		return nil
	}
	return c.win[:k]
}

// block returns a copy of the first min(k, maxExifBytes) bytes at off, nil
// unless all k bytes lie within the cursor's span.
func (c *cursor) block(off, k int64) []byte {
	if off < 0 || k < 0 || off > c.n-k {
		return nil
	}
	return bytes.Clone(c.at(off, min(k, maxExifBytes)))
}

// jpegExif walks the marker segments before the first scan and returns the
// payload of the first APP1 Exif segment, without its "Exif\0\0" prefix.
func jpegExif(c *cursor) []byte {
	if soi := c.at(0, 2); soi == nil || soi[0] != 0xFF || soi[1] != 0xD8 {
		return nil
	}
	for i := int64(2); ; {
		h := c.at(i, 4)
		if h == nil {
			// a marker without a length may end the span
			if h = c.at(i, 2); h == nil {
				return nil
			}
		}
		if h[0] != 0xFF {
			return nil
		}
		m := h[1]
		switch {
		case m == 0xFF: // fill byte
			i++
			continue
		case m == 0x01 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7): // no length
			i += 2
			continue
		case m == 0xDA || m == 0xD9: // start of scan, end of image
			return nil
		}
		if len(h) < 4 {
			return nil
		}
		n := int64(binary.BigEndian.Uint16(h[2:]))
		if n < 2 {
			return nil
		}
		if m == 0xE1 {
			if seg := c.block(i+4, n-2); bytes.HasPrefix(seg, exifPrefix) {
				return seg[len(exifPrefix):]
			}
		}
		if i+2+n > c.n {
			return nil
		}
		i += 2 + n
	}
}

// pngExif returns the data of the eXIf chunk, before or after IDAT.
func pngExif(c *cursor) []byte {
	if sig := c.at(0, 8); sig == nil || string(sig) != "\x89PNG\r\n\x1a\n" {
		return nil
	}
	for i := int64(8); ; {
		h := c.at(i, 8)
		if h == nil {
			return nil
		}
		n := int64(binary.BigEndian.Uint32(h))
		typ := string(h[4:8])
		if typ == "IEND" || i+8+n > c.n {
			return nil
		}
		if typ == "eXIf" {
			return c.block(i+8, n)
		}
		i += 8 + n + 4 // skip the CRC
	}
}

// webpExif returns the data of the RIFF "EXIF" chunk of a WebP file.
func webpExif(c *cursor) []byte {
	if h := c.at(0, 12); h == nil || string(h[:4]) != "RIFF" || string(h[8:12]) != "WEBP" {
		return nil
	}
	for i := int64(12); ; {
		h := c.at(i, 8)
		if h == nil {
			return nil
		}
		n := int64(binary.LittleEndian.Uint32(h[4:]))
		if i+8+n > c.n {
			return nil
		}
		if string(h[:4]) == "EXIF" {
			return c.block(i+8, n)
		}
		end := i + 8 + n
		i = end + end&1 // chunks are padded to even size
	}
}

// tiffOrientation reads tag 0x0112 from IFD0 of a TIFF structure, or 0.
func tiffOrientation(t []byte) int {
	return tiffOrientationAt(&cursor{ra: bytes.NewReader(t), n: int64(len(t))})
}

// tiffOrientationAt reads tag 0x0112 from IFD0 of the TIFF structure at the
// start of c, or 0; only the header and IFD0's entries are read.
func tiffOrientationAt(c *cursor) int {
	h := c.at(0, 8)
	if h == nil {
		return 0
	}
	var bo binary.ByteOrder
	switch string(h[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int64(bo.Uint32(h[4:]))
	cnt := c.at(off, 2)
	if cnt == nil {
		return 0
	}
	for e, n := off+2, bo.Uint16(cnt); n > 0; e, n = e+12, n-1 {
		entry := c.at(e, 12)
		if entry == nil {
			return 0
		}
		if bo.Uint16(entry) == orientationTag {
			return ifdValue(entry, bo)
		}
	}
	return 0
}

// ifdValue decodes the inline value of a 12-byte IFD entry of type BYTE,
// SHORT or LONG (orientation is specified as SHORT; be lenient).
func ifdValue(e []byte, bo binary.ByteOrder) int {
	switch bo.Uint16(e[2:]) {
	case 1:
		return int(e[8])
	case 3:
		return int(bo.Uint16(e[8:]))
	case 4:
		return int(bo.Uint32(e[8:]))
	}
	return 0
}
