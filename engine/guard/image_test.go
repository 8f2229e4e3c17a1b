package guard

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/turbospark/inspector/engine/imageproc"
)

// adam7PNG is a w x h 16-bit RGBA PNG, Adam7-interlaced (Go's encoder writes none), every
// pixel distinct enough not to compress to nothing.
func adam7PNG(w, h int) []byte {
	var raw bytes.Buffer
	passes := [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	for _, p := range passes { // x0, y0, dx, dy
		for y := p[1]; y < h; y += p[3] {
			if p[0] >= w {
				break
			}
			raw.WriteByte(0) // filter: none
			for x := p[0]; x < w; x += p[2] {
				for c := range 4 {
					binary.Write(&raw, binary.BigEndian, uint16(x*31+y*17+c*4099))
				}
			}
		}
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw.Bytes())
	zw.Close()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&out, binary.BigEndian, uint32(len(data)))
		out.WriteString(typ)
		out.Write(data)
		binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	copy(ihdr[8:], []byte{16, 6, 0, 0, 1}) // 16-bit RGBA, interlaced
	chunk("IHDR", ihdr)
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// Decoding any format holds at most DecodeBytesPerPixel a pixel of its format: every byte it allocates,
// garbage included (TotalAlloc, an upper bound of its peak), for the formats and depths that
// decode widest (16-bit RGBA PNG, interlaced; 16-bit TIFF, deflated; 4:4:4 JPEG).
func TestDecodeMemory(t *testing.T) {
	const w, h = 1200, 900
	rgba64 := image.NewNRGBA64(image.Rect(0, 0, w, h))
	rgb := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			rgba64.SetNRGBA64(x, y, color.NRGBA64{uint16(x * 53), uint16(y * 97), uint16(x * y), 0xffff})
			rgb.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	encode := map[string]func(*bytes.Buffer) error{
		"png16": func(b *bytes.Buffer) error { return png.Encode(b, rgba64) },
		"png8":  func(b *bytes.Buffer) error { return png.Encode(b, rgb) },
		"png16-adam7": func(b *bytes.Buffer) error {
			_, err := b.Write(adam7PNG(w, h))
			return err
		},
		"jpeg": func(b *bytes.Buffer) error { return jpeg.Encode(b, rgb, &jpeg.Options{Quality: 100}) },
		"gif":  func(b *bytes.Buffer) error { return gif.Encode(b, rgb, nil) },
		"bmp":  func(b *bytes.Buffer) error { return bmp.Encode(b, rgb) },
		"tiff16-deflate": func(b *bytes.Buffer) error {
			return tiff.Encode(b, rgba64, &tiff.Options{Compression: tiff.Deflate})
		},
		"tiff16": func(b *bytes.Buffer) error { return tiff.Encode(b, rgba64, nil) },
	}
	dir := t.TempDir()
	for name, enc := range encode {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(name, err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		img, err := imageproc.Load(path, imageproc.DefaultLimits())
		runtime.ReadMemStats(&after)
		if err != nil || img.W != w || img.H != h {
			t.Fatalf("%s: %v", name, err)
		}
		per := float64(after.TotalAlloc-before.TotalAlloc) / (w * h)
		allowed := DecodeBytesPerPixel(SniffFormat(path))
		t.Logf("%s: %.1f bytes a pixel allocated, %d allowed", name, per, allowed)
		if per > float64(allowed) {
			t.Errorf("%s: decoding allocated %.1f bytes a pixel, more than the %d the memory check allows for", name, per, allowed)
		}
	}
}
