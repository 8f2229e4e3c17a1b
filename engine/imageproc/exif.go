// This file keeps one invariant: exifOrientation finds the same EXIF
// Orientation (tag 0x0112 of IFD0) that PIL's getexif() sees: the first
// JPEG APP1 "Exif\0\0" segment, a PNG eXIf chunk, a WebP EXIF chunk or a
// TIFF file's own IFD0, in either byte order; anything missing, malformed or
// outside 1..8 means 1 (leave the image alone). It never panics on
// truncated input: every read is bounds-checked.
// Mutation that would silently break it: decoding the IFD with a fixed
// little-endian order makes every "MM" (big-endian) orientation 6 read as
// 1536, i.e. ignored, so phone pictures stay sideways.
package imageproc

import (
	"bytes"
	"encoding/binary"
)

const orientationTag = 0x0112

var exifPrefix = []byte("Exif\x00\x00")

// exifOrientation returns the orientation stored in an encoded image of the
// given format (as named by image.Decode), or 1.
func exifOrientation(data []byte, format string) int {
	var tiff []byte
	switch format {
	case "jpeg":
		tiff = jpegExif(data)
	case "png":
		tiff = pngExif(data)
	case "webp":
		tiff = webpExif(data)
	case "tiff":
		tiff = data
	}
	o := tiffOrientation(bytes.TrimPrefix(tiff, exifPrefix))
	if o < 1 || o > 8 {
		return 1
	}
	return o
}

// jpegExif walks the marker segments before the first scan and returns the
// payload of the first APP1 Exif segment, without its "Exif\0\0" prefix.
func jpegExif(d []byte) []byte {
	if len(d) < 4 || d[0] != 0xFF || d[1] != 0xD8 {
		return nil
	}
	for i := 2; i+4 <= len(d); {
		if d[i] != 0xFF {
			return nil
		}
		m := d[i+1]
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
		n := int(binary.BigEndian.Uint16(d[i+2:]))
		if n < 2 || i+2+n > len(d) {
			return nil
		}
		seg := d[i+4 : i+2+n]
		if m == 0xE1 && bytes.HasPrefix(seg, exifPrefix) {
			return seg[len(exifPrefix):]
		}
		i += 2 + n
	}
	return nil
}

// pngExif returns the data of the eXIf chunk, before or after IDAT.
func pngExif(d []byte) []byte {
	if len(d) < 8 || string(d[:8]) != "\x89PNG\r\n\x1a\n" {
		return nil
	}
	for i := 8; i+8 <= len(d); {
		n := int64(binary.BigEndian.Uint32(d[i:]))
		typ := string(d[i+4 : i+8])
		end := int64(i) + 8 + n
		if end > int64(len(d)) || typ == "IEND" {
			return nil
		}
		if typ == "eXIf" {
			return d[i+8 : end]
		}
		i = int(end) + 4 // skip the CRC
	}
	return nil
}

// webpExif returns the data of the RIFF "EXIF" chunk of a WebP file.
func webpExif(d []byte) []byte {
	if len(d) < 12 || string(d[:4]) != "RIFF" || string(d[8:12]) != "WEBP" {
		return nil
	}
	for i := 12; i+8 <= len(d); {
		n := int64(binary.LittleEndian.Uint32(d[i+4:]))
		end := int64(i) + 8 + n
		if end > int64(len(d)) {
			return nil
		}
		if string(d[i:i+4]) == "EXIF" {
			return d[i+8 : end]
		}
		i = int(end + end&1) // chunks are padded to even size
	}
	return nil
}

// tiffOrientation reads tag 0x0112 from IFD0 of a TIFF structure, or 0.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int64(bo.Uint32(t[4:]))
	if off+2 > int64(len(t)) {
		return 0
	}
	n := int64(bo.Uint16(t[off:]))
	for e := off + 2; e+12 <= int64(len(t)) && n > 0; e, n = e+12, n-1 {
		if bo.Uint16(t[e:]) == orientationTag {
			return ifdValue(t[e:e+12], bo)
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
