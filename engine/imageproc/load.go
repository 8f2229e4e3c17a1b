// This file keeps two invariants. A file's declared width*height is checked
// against Limits from its header alone before any pixel decoding, and every
// error returned names the file. And no input is read whole: the header is
// read from at most its first headerBytes (TIFF, whose directory may lie
// anywhere, from what the limit allows), then the decoders see at most the
// first neededBytes(format, width, height): what an image of the declared
// size can take in that format, plus slack for metadata. Bytes past that
// prefix are never read; an image whose data lies past it fails to decode
// with an error that says the file was cut there.
// Mutations that would silently break them: calling image.Decode before the
// header check makes a 70-byte PNG declaring 100000x100000 ask for a 30 GB
// buffer before any limit applies (TestLimitCheckedBeforeDecoding sees a
// decode error instead of the limit message, or the process dies); reading
// the input with io.ReadAll (under a cap or not) before decoding makes a
// 2 GiB file cost its size in memory (TestHugeFilesReadOnlyWhatTheyNeed).
package imageproc

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"io/fs"

	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG

	_ "golang.org/x/image/bmp" // register BMP
	"golang.org/x/image/tiff"
	_ "golang.org/x/image/webp" // register WebP

	"github.com/turbospark/inspector/internal/fsx"
)

// RGB is an 8-bit interleaved RGB image, HWC; len(Pix) == W*H*3.
type RGB struct {
	W, H int
	Pix  []uint8
	// Note says where this image's pixels part from what PIL (and so transformers) would
	// make of the file ("" where they do not).
	Note string
}

// Limits bound what Load accepts before decoding anything.
type Limits struct {
	// MaxPixels bounds the declared width*height, checked from the header.
	// Zero or negative means DefaultLimits().MaxPixels.
	MaxPixels int64
}

// DefaultLimits allows images of up to 100 megapixels.
func DefaultLimits() Limits { return Limits{MaxPixels: 100_000_000} }

const (
	// headerBytes bounds where a header may end: PNG's IHDR comes first,
	// JPEG's frame header after its APPn segments, GIF's first image
	// descriptor after its extensions, WebP's and BMP's in the first bytes.
	headerBytes = 64 << 20
	// metadataSlack is added to every format's bound for what is not pixels:
	// ICC profiles, EXIF and XMP, thumbnails, text chunks, a BMP's gap.
	metadataSlack = 64 << 20
)

// encodedSize bounds the bytes an image of the format takes per pixel and per
// row, data framing included, at worst for files real encoders write.
var encodedSize = map[string]struct{ perPixel, perRow int64 }{
	"png":  {8, 8},  // 16-bit RGBA stored uncompressed; a filter byte a row in each Adam7 pass
	"tiff": {12, 0}, // 16-bit RGBA, LZW growing incompressible data by half
	"jpeg": {16, 0}, // 3 components at quality 100 on noise take well under this
	"webp": {10, 0}, // lossless: four 15-bit codes a pixel at worst
	"bmp":  {4, 4},  // 32-bit pixels; rows padded to 4 bytes
	"gif":  {3, 0},  // a 12-bit code a pixel, a clear code as often as one a pixel
}

// neededBytes is how much of a file a w x h image of the format can need.
func neededBytes(format string, w, h int64) int64 {
	s, ok := encodedSize[format]
	if !ok {
		s = encodedSize["tiff"] // the largest per pixel but JPEG's
	}
	return w*h*s.perPixel + h*s.perRow + metadataSlack
}

// Load opens a file and decodes it like Decode, reading it in place: only
// the header and then the bytes the declared size can need are read, and
// none of them is kept beyond the decoders' own buffers, whatever the size of
// the file.
func Load(path string, lim Limits) (*RGB, error) {
	f, err := fsx.OpenRegular(path) // a FIFO or a device is refused, not waited on
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: cannot open image: %w", path, pe.Err)
		}
		return nil, fmt.Errorf("cannot open image: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read image: %w", path, err)
	}
	lim = lim.orDefault()
	tiffSpan := neededBytes("tiff", lim.MaxPixels, 1) // a directory may lie anywhere in that
	return decodeFrom(&fileSource{f: f, size: st.Size()}, path, lim, tiffSpan)
}

// Decode reads an image (PNG, JPEG, GIF, WebP, BMP, TIFF) from r, checks its
// declared size against lim before decoding, decodes it, applies the EXIF
// orientation like PIL's ImageOps.exif_transpose and converts it to RGB the
// way transformers' load_image does (PIL's convert("RGB")): alpha dropped
// without compositing, gray and palette expanded. name is used in error
// messages. r is read only as far as the decoders ask (the header first,
// then at most neededBytes for the declared size) and what was read is kept
// in memory, since a stream cannot be read twice; a TIFF read this way must
// have its first directory within its first headerBytes (Load has no such
// bound).
//
// What a decoded pixel is, where PIL (12.3, measured) is not obvious:
//   - GIF: frame 0 on a page of the logical screen's size, as gif.go says.
//   - 16-bit PNG, RGB, RGBA and gray+alpha: the high byte of each sample
//     (PIL unpacks them with ";16B" raw modes, which keep the high byte; no
//     rounding: 0x80FF is 0x80).
//   - 16-bit gray PNG (with or without tRNS): also the high byte, and here
//     we depart from PIL. PIL opens it as mode "I;16" and its convert("RGB")
//     clips: a sample of 255 or more becomes 255, so an ordinary 16-bit gray
//     image turns white wherever it is not within the darkest 0.4% of the
//     range. We treat gray like PIL's own 16-bit RGB (a 16-bit gray image
//     decodes as the same image saved as 16-bit RGB with R=G=B does): the
//     user sees the picture where the transformers reference pipeline would
//     see a white page. A 16-bit gray TIFF, which PIL also opens as "I;16",
//     is treated the same (not measured).
func Decode(r io.Reader, name string, lim Limits) (*RGB, error) {
	return decodeFrom(&streamSource{r: r}, name, lim.orDefault(), headerBytes)
}

func (lim Limits) orDefault() Limits {
	if lim.MaxPixels <= 0 {
		return DefaultLimits()
	}
	return lim
}

// header is what decodeFrom knows before it decodes any pixel.
type header struct {
	format string
	w, h   int
	gif    *gifHeader // for "gif"
	gray16 bool       // 16-bit gray samples (PNG, TIFF): PIL clips them, we keep the high byte
}

func decodeFrom(src byteSource, name string, lim Limits, tiffSpan int64) (*RGB, error) {
	hd, err := readHeader(src, tiffSpan)
	if err != nil {
		if src.cut() && ranOut(err) {
			return nil, fmt.Errorf("%s: cannot decode image: no header in its first %d bytes (the rest is not read): %w",
				name, src.allowed(), err)
		}
		return nil, fmt.Errorf("%s: cannot decode image: %w", name, err)
	}
	if hd.w <= 0 || hd.h <= 0 {
		return nil, fmt.Errorf("%s: image declares %dx%d pixels", name, hd.w, hd.h)
	}
	if int64(hd.w)*int64(hd.h) > lim.MaxPixels {
		return nil, fmt.Errorf("%s: image declares %dx%d pixels, more than the limit of %d",
			name, hd.w, hd.h, lim.MaxPixels)
	}
	n := src.upTo(neededBytes(hd.format, int64(hd.w), int64(hd.h)))
	rgb, err := decodePixels(src, n, hd)
	if err != nil {
		if src.cut() && ranOut(err) {
			return nil, fmt.Errorf("%s: cannot decode image from its first %d bytes (all a %dx%d %s can need; the rest is not read): %w",
				name, n, hd.w, hd.h, hd.format, err)
		}
		return nil, fmt.Errorf("%s: cannot decode image: %w", name, err)
	}
	if hd.gray16 { // with or without a transparent sample: PIL opens both as mode I;16
		rgb.Note = gray16Note
	}
	return applyOrientation(rgb, exifOrientationAt(src, n, hd.format)), nil
}

// readHeader finds the format and the declared size from the first bytes.
func readHeader(src byteSource, tiffSpan int64) (hd header, err error) {
	defer recoverInto(&err)
	n := src.upTo(headerBytes)
	magic := make([]byte, 8)
	m, _ := src.ReadAt(magic, 0)
	magic = magic[:m]
	switch {
	case isGIF(magic):
		g, err := readGIFHeader(io.NewSectionReader(src, 0, n))
		if err != nil {
			return hd, err
		}
		return header{format: "gif", w: g.w, h: g.h, gif: g}, nil
	case isTIFF(magic):
		// a ReaderAt, so that the decoder seeks to the directory instead of
		// reading (and keeping) everything before it
		cfg, err := tiff.DecodeConfig(io.NewSectionReader(src, 0, src.upTo(tiffSpan)))
		return header{format: "tiff", w: cfg.Width, h: cfg.Height, gray16: cfg.ColorModel == color.Gray16Model}, err
	}
	cfg, format, err := image.DecodeConfig(io.NewSectionReader(src, 0, n))
	return header{format: format, w: cfg.Width, h: cfg.Height, gray16: cfg.ColorModel == color.Gray16Model}, err
}

// ranOut reports a decoder error that says its input ended.
func ranOut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

func isTIFF(magic []byte) bool {
	return len(magic) >= 4 && (string(magic[:4]) == "II*\x00" || string(magic[:4]) == "MM\x00*")
}

// decodePixels decodes the image from the first n bytes of src, turning a
// decoder panic on hostile input into an error.
func decodePixels(src byteSource, n int64, hd header) (rgb *RGB, err error) {
	defer recoverInto(&err)
	switch hd.format {
	case "gif":
		return decodeGIF(io.NewSectionReader(src, hd.gif.dataOff, n-hd.gif.dataOff), hd.gif)
	case "tiff":
		img, err := tiff.Decode(io.NewSectionReader(src, 0, n))
		if err != nil {
			return nil, err
		}
		return toRGB(img), nil
	}
	img, _, err := image.Decode(bufio.NewReaderSize(io.NewSectionReader(src, 0, n), 64<<10))
	if err != nil {
		return nil, err
	}
	return toRGB(img), nil
}

func recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("decoder panic: %v", p)
	}
}
