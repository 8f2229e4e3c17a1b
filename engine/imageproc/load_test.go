// Load/Decode tests. Invariants checked: colour channels come back as
// stored (no alpha compositing, no premultiplication), gray and palette
// expand to RGB, the declared size is checked before decoding, and every
// error names the file without panicking on truncated input.
package imageproc

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

func encodePNG(t *testing.T, img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decodeOK(t *testing.T, data []byte, name string) *RGB {
	t.Helper()
	got, err := Decode(bytes.NewReader(data), name, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func wantPixels(t *testing.T, label string, got *RGB, w, h int, pix ...uint8) {
	t.Helper()
	if got.W != w || got.H != h || !bytes.Equal(got.Pix, pix) {
		t.Fatalf("%s: got %dx%d %v, want %dx%d %v", label, got.W, got.H, got.Pix, w, h, pix)
	}
}

func TestPNGAlphaNotComposited(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 1))
	img.SetNRGBA(0, 0, color.NRGBA{255, 0, 0, 128})
	img.SetNRGBA(1, 0, color.NRGBA{10, 20, 30, 0})
	img.SetNRGBA(2, 0, color.NRGBA{200, 100, 50, 255})
	got := decodeOK(t, encodePNG(t, img), "a.png")
	wantPixels(t, "RGBA png", got, 3, 1, 255, 0, 0, 10, 20, 30, 200, 100, 50)
}

func TestPNG16BitAlphaNotComposited(t *testing.T) {
	img := image.NewNRGBA64(image.Rect(0, 0, 2, 1))
	img.SetNRGBA64(0, 0, color.NRGBA64{0xffff, 0x1234, 0, 0x8000})
	img.SetNRGBA64(1, 0, color.NRGBA64{0x0a00, 0x1400, 0x1eff, 0})
	got := decodeOK(t, encodePNG(t, img), "a16.png")
	wantPixels(t, "RGBA64 png", got, 2, 1, 255, 0x12, 0, 10, 20, 30)
}

func TestPNGGrayscale(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 2, 2))
	copy(img.Pix, []uint8{0, 77, 200, 255})
	got := decodeOK(t, encodePNG(t, img), "g.png")
	wantPixels(t, "gray png", got, 2, 2, 0, 0, 0, 77, 77, 77, 200, 200, 200, 255, 255, 255)

	g16 := image.NewGray16(image.Rect(0, 0, 1, 1))
	g16.SetGray16(0, 0, color.Gray16{0xab12})
	wantPixels(t, "gray16 png", decodeOK(t, encodePNG(t, g16), "g16.png"), 1, 1, 0xab, 0xab, 0xab)
}

func TestPNGPaletted(t *testing.T) {
	pal := color.Palette{color.RGBA{1, 2, 3, 255}, color.NRGBA{250, 128, 7, 0}, color.NRGBA{9, 8, 7, 100}}
	img := image.NewPaletted(image.Rect(0, 0, 3, 1), pal)
	copy(img.Pix, []uint8{2, 0, 1})
	got := decodeOK(t, encodePNG(t, img), "p.png")
	wantPixels(t, "paletted png", got, 3, 1, 9, 8, 7, 1, 2, 3, 250, 128, 7)
}

func TestOtherFormats(t *testing.T) {
	src := testPattern(9, 5)
	nrgba := image.NewNRGBA(image.Rect(0, 0, 9, 5))
	for i := range 45 {
		copy(nrgba.Pix[i*4:], src.Pix[i*3:i*3+3])
		nrgba.Pix[i*4+3] = 255
	}
	var b, tf, gf bytes.Buffer
	if err := bmp.Encode(&b, nrgba); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tf, nrgba, nil); err != nil {
		t.Fatal(err)
	}
	pal := image.NewPaletted(nrgba.Bounds(), color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{90, 160, 250, 255}})
	pal.Pix[7] = 1
	if err := gif.Encode(&gf, pal, nil); err != nil {
		t.Fatal(err)
	}
	wantPixels(t, "bmp", decodeOK(t, b.Bytes(), "x.bmp"), 9, 5, src.Pix...)
	wantPixels(t, "tiff", decodeOK(t, tf.Bytes(), "x.tiff"), 9, 5, src.Pix...)
	g := decodeOK(t, gf.Bytes(), "x.gif")
	if !bytes.Equal(g.Pix[21:24], []uint8{90, 160, 250}) || !bytes.Equal(g.Pix[:3], []uint8{0, 0, 0}) {
		t.Fatalf("gif pixels %v", g.Pix[:27])
	}
}

func TestLoadFromFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gray.png")
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	img.Pix[0] = 42
	if err := os.WriteFile(p, encodePNG(t, img), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	wantPixels(t, "Load", got, 1, 1, 42, 42, 42)
	_, err = Load(filepath.Join(dir, "missing.jpg"), DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "missing.jpg") {
		t.Fatalf("missing file: %v", err)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

func TestUndecodable(t *testing.T) {
	_, err := Decode(strings.NewReader("this is not an image at all"), "photo.jpg", DefaultLimits())
	wantErr(t, err, "photo.jpg: cannot decode image")
	_, err = Decode(bytes.NewReader(nil), "empty.png", DefaultLimits())
	wantErr(t, err, "empty.png")
}

// hugePNGHeader is a PNG signature and a valid IHDR declaring w x h RGB8,
// followed by IEND and no image data at all.
func hugePNGHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32([]byte("IHDR"), w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, 13)
	b = append(b, ihdr...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(ihdr))
	b = append(b, 0, 0, 0, 0)
	b = append(b, "IEND"...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE([]byte("IEND")))
}

// TestLimitCheckedBeforeDecoding: the crafted PNG has no IDAT, so had it been
// decoded the error would be a decode error, not the limit.
func TestLimitCheckedBeforeDecoding(t *testing.T) {
	_, err := Decode(bytes.NewReader(hugePNGHeader(100000, 100000)), "big.png", DefaultLimits())
	wantErr(t, err, "big.png: image declares 100000x100000 pixels, more than the limit of 100000000")

	small := encodePNG(t, image.NewGray(image.Rect(0, 0, 10, 10)))
	_, err = Decode(bytes.NewReader(small), "s.png", Limits{MaxPixels: 99})
	wantErr(t, err, "s.png", "10x10", "limit of 99")
	if _, err := Decode(bytes.NewReader(small), "s.png", Limits{MaxPixels: 100}); err != nil {
		t.Fatalf("exactly at the limit: %v", err)
	}
	// within limits, the same headerless file fails as a decode error
	_, err = Decode(bytes.NewReader(hugePNGHeader(10, 10)), "nodata.png", DefaultLimits())
	wantErr(t, err, "nodata.png: cannot decode image")
}

func TestAspectRatioError(t *testing.T) {
	got := decodeOK(t, encodePNG(t, image.NewGray(image.Rect(0, 0, 201, 1))), "thin.png")
	_, err := Preprocess(got, QwenConfig())
	wantErr(t, err, "1x201", "aspect ratio")
}

// TestTruncatedFiles cuts valid files at every length: never a panic; PNG
// and JPEG always fail with the file name; the others either fail naming the
// file or (GIF stops after its first frame) return a full-size image.
func TestTruncatedFiles(t *testing.T) {
	src := gridImage(baseGrid())
	var jb, gb, bb, tb bytes.Buffer
	_ = jpeg.Encode(&jb, src, nil)
	_ = gif.Encode(&gb, src, nil)
	_ = bmp.Encode(&bb, src)
	_ = tiff.Encode(&tb, src, nil)
	files := map[string][]byte{
		"t.png": encodePNG(t, src), "t.jpg": jpegWithExif(t, src, tiffWithOrientation(true, 6)),
		"t.gif": gb.Bytes(), "t.bmp": bb.Bytes(), "t.tiff": tb.Bytes(),
	}
	for name, data := range files {
		for n := range len(data) {
			img, err := Decode(bytes.NewReader(data[:n]), name, DefaultLimits())
			strict := name == "t.png" || name == "t.jpg"
			switch {
			case err != nil && !strings.HasPrefix(err.Error(), name+": "):
				t.Fatalf("%s cut at %d: error does not name the file: %v", name, n, err)
			case err == nil && strict:
				t.Fatalf("%s cut at %d of %d: no error", name, n, len(data))
			case err == nil && img.W*img.H*3 != len(img.Pix):
				t.Fatalf("%s cut at %d: inconsistent image", name, n)
			}
		}
	}
}
