// This file keeps one invariant: a file's declared width*height is checked
// against Limits from the header alone (image.DecodeConfig) before any pixel
// decoding, and every error returned names the file.
// Mutation that would silently break it: calling image.Decode before the
// DecodeConfig check makes a 70-byte PNG declaring 100000x100000 ask for a
// 30 GB buffer before any limit applies (TestLimitCheckedBeforeDecoding
// sees a decode error instead of the limit message, or the process dies).
package imageproc

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"

	_ "image/gif"  // register GIF
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG

	_ "golang.org/x/image/bmp"  // register BMP
	_ "golang.org/x/image/tiff" // register TIFF
	_ "golang.org/x/image/webp" // register WebP

	"github.com/turbospark/inspector/internal/fsx"
)

// RGB is an 8-bit interleaved RGB image, HWC; len(Pix) == W*H*3.
type RGB struct {
	W, H int
	Pix  []uint8
}

// Limits bound what Load accepts before decoding anything.
type Limits struct {
	// MaxPixels bounds the declared width*height, checked from the header.
	// Zero or negative means DefaultLimits().MaxPixels.
	MaxPixels int64
}

// DefaultLimits allows images of up to 100 megapixels.
func DefaultLimits() Limits { return Limits{MaxPixels: 100_000_000} }

// maxBytesPerPixel bounds how many file bytes a within-limit image can
// plausibly need (uncompressed 16-bit RGBA is 8); reading stops beyond it.
const (
	maxBytesPerPixel = 8
	maxFileSlack     = 64 << 20
)

// Load opens and decodes an image file; see Decode.
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
	return Decode(f, path, lim)
}

// Decode reads an image (PNG, JPEG, GIF, WebP, BMP, TIFF) from r, checks its
// declared size against lim before decoding, decodes it, applies the EXIF
// orientation like PIL's ImageOps.exif_transpose and converts it to RGB the
// way PIL's convert("RGB") does: alpha dropped without compositing, gray
// and palette expanded. name is used in error messages.
func Decode(r io.Reader, name string, lim Limits) (*RGB, error) {
	if lim.MaxPixels <= 0 {
		lim = DefaultLimits()
	}
	data, err := readCapped(r, lim.MaxPixels*maxBytesPerPixel+maxFileSlack)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read image: %w", name, err)
	}
	if err := checkHeader(data, name, lim); err != nil {
		return nil, err
	}
	img, format, err := safeDecode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode image: %w", name, err)
	}
	rgb := toRGB(img)
	return applyOrientation(rgb, exifOrientation(data, format)), nil
}

// readCapped reads all of r, failing once more than limit bytes arrive.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than %d bytes", limit)
	}
	return data, nil
}

// checkHeader reads only the header and enforces lim.
func checkHeader(data []byte, name string, lim Limits) error {
	cfg, _, err := safeDecodeConfig(data)
	if err != nil {
		return fmt.Errorf("%s: cannot decode image: %w", name, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("%s: image declares %dx%d pixels", name, cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > lim.MaxPixels {
		return fmt.Errorf("%s: image declares %dx%d pixels, more than the limit of %d",
			name, cfg.Width, cfg.Height, lim.MaxPixels)
	}
	return nil
}

// safeDecodeConfig and safeDecode turn a decoder panic on hostile input into
// an error.
func safeDecodeConfig(data []byte) (cfg image.Config, format string, err error) {
	defer recoverInto(&err)
	return image.DecodeConfig(bytes.NewReader(data))
}

func safeDecode(data []byte) (img image.Image, format string, err error) {
	defer recoverInto(&err)
	return image.Decode(bytes.NewReader(data))
}

func recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("decoder panic: %v", p)
	}
}
