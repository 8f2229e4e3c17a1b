package guard

// image.go: what decoding an image and making its page may hold, bounded before they are made
// (the engine's page loader, ckpt.Checkpoint.LoadPage, checks them against the limits).
// Decoding is bounded from the file's header (imageproc.Limits.MaxPixels: the pixels whose
// decoding fits, DecodeBytesPerPixel a pixel), the page from the decoded size (PageBound: at
// least what imageproc's smart_resize gives) before Preprocess allocates it; NewSession then
// checks the run on the page it got.
//
// Invariant: PageBound is never below the page Preprocess makes, for any image size and
// processor settings (TestPageBound runs Preprocess beside it), so the check made before
// Preprocess covers what Preprocess allocates. Mutation that would silently break it:
// bounding by the rounded size alone, (h+f/2)(w+f/2) — an image below min_pixels is scaled
// up past it, and a 1-pixel-high strip is scaled to a page thousands of times its size.

import (
	"bufio"
	"fmt"
	"image"
	"io"
	"math"

	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/internal/fsx"
)

// DecodeBytesPerPixel bounds the memory decoding an image takes, a pixel: the decoder's image
// (8 bytes for 16-bit RGBA PNG and TIFF), its working buffers (a PNG's Adam7 pass image; a
// TIFF's whole strip, grown by doubling as it is inflated: 43 bytes a pixel allocated in all
// for a deflated 16-bit TIFF), the RGB copy (3) and the EXIF rotation's copy (3).
// TestDecodeMemory measures every byte each format allocates against it.
func DecodeBytesPerPixel(format string) int64 {
	if format == "tiff" {
		return 48
	}
	return 24
}

// SniffFormat is "tiff" for a file that starts like one (the header is where imageproc finds
// the format; this is only for the memory it may take), else "".
func SniffFormat(path string) string {
	f, err := fsx.OpenRegular(path)
	if err != nil {
		return "tiff" // unknown: the most a pixel; Load says what is wrong with the file
	}
	defer f.Close()
	magic := make([]byte, 4)
	if n, _ := io.ReadFull(f, magic); n == 4 && (string(magic) == "II*\x00" || string(magic) == "MM\x00*") {
		return "tiff"
	}
	return ""
}

// DecodeRefused says why an image past the pixels the memory decodes was refused, and what
// decoding it would need (its declared size read again from its header for that).
func DecodeRefused(path string, err error, per int64, l Limit) error {
	size, need := "", ""
	if f, ferr := fsx.OpenRegular(path); ferr == nil {
		cfg, _, cerr := image.DecodeConfig(bufio.NewReader(io.LimitReader(f, 64<<20)))
		f.Close()
		if cerr == nil {
			n := int64(cfg.Width) * int64(cfg.Height) * per
			size, need = " ("+FormatBytes(n)+")", ": "+l.Needs(n)
		}
	}
	return fmt.Errorf("%w: decoding would hold about %d bytes a pixel%s, more than %s allows%s; use a smaller image",
		err, per, size, l.Why, need)
}

// PageBound bounds the pixels of the page smart_resize makes of an h x w image under pre
// (imageproc's smartResize), and its width, over every branch the image may take: the size
// rounded to the factor f (within f/2 a side) where that may lie in [min_pixels,
// max_pixels]; scaled down to max_pixels where it may lie above (floored to f a side, at
// least f); scaled up past min_pixels where it may lie below (ceiled: within f a side), and
// down again where that may pass max_pixels.
func PageBound(h, w int, pre imageproc.Config) (pixels, width int64) {
	f := float64(pre.PatchSize * pre.MergeSize)
	fh, fw := float64(h), float64(w)
	area := fh * fw
	maxP, minP := float64(pre.MaxPixels), float64(pre.MinPixels)
	var px, wd float64
	take := func(p, w float64) { px, wd = max(px, p), max(wd, w) }
	shrink := func() {
		beta := math.Sqrt(area / maxP)
		take(max(f, fh/beta)*max(f, fw/beta), max(f, fw/beta))
	}
	lo, hi := max(fh-f/2, 0)*max(fw-f/2, 0), (fh+f/2)*(fw+f/2)
	if lo <= maxP && hi >= minP {
		take(min(hi, maxP), fw+f/2)
	}
	if hi > maxP {
		shrink()
	}
	if lo < minP {
		beta := math.Sqrt(minP / area)
		uh, uw := fh*beta+f, fw*beta+f
		take(min(uh*uw, maxP), uw)
		if uh*uw > maxP {
			shrink()
		}
	}
	return int64(math.Ceil(px)), int64(math.Ceil(wd))
}
