package ckpt

// page.go: a page to run, as the checkpoint's processor makes it from an image (or as a caller
// gives its pixel_values rows): LoadImage decodes and preprocesses, LoadPage does so within the
// memory limits in force (engine/guard's decoding and page bounds), refusing an image or a page
// they cannot take before it is allocated.
//
// Invariant: a page's pixel_values rows are made by imageproc.Preprocess with the checkpoint's
// processor settings (ck.Pre, which follow the tower's patch geometry), and LoadPage checks
// the preprocessing's whole holding (the decoded image, the horizontal pass, the resized image
// and the pixel values) under every limit before Preprocess runs. Mutation that would silently
// break it: no check between decoding and Preprocess — a large image's page would be made past
// ulimit -v, where the Go runtime dies ("fatal error: out of memory") instead of refusing
// (TestAddressLimitImage).

import (
	"fmt"
	"strings"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/imageproc"
)

// Input is a page to run: pixel_values rows and their grids, and the image when there is one.
type Input struct {
	Pixels []float32 // [S, C*Tp*P*P]
	Grids  []geom.Grid
	Image  *imageproc.Page // nil for raw pixel_values
	Path   string          // the image file it came from ("" for raw pixel_values): provenance
	Note   string          // where the page parts from transformers' preprocessing ("" where it does not)
}

// Patches is the page's sequence length S.
func (in *Input) Patches() int {
	n := 0
	for _, g := range in.Grids {
		n += g.Patches()
	}
	return n
}

// LoadImage decodes and preprocesses an image with the checkpoint's processor settings.
func (c *Checkpoint) LoadImage(path string, lim imageproc.Limits) (*Input, error) {
	img, err := imageproc.Load(path, lim)
	if err != nil {
		return nil, err
	}
	page, err := imageproc.Preprocess(img, c.Pre)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &Input{Pixels: page.Pixels, Grids: []geom.Grid{{T: page.Grid[0], H: page.Grid[1], W: page.Grid[2]}}, Image: page, Note: img.Note, Path: path}, nil
}

// LoadPage decodes path and makes its page with ck's processor settings, refusing what the
// memory limits in force (maxMemory among them: the run's max memory setting, 0 for none)
// cannot take, before it is allocated.
func (ck *Checkpoint) LoadPage(path string, maxMemory int64) (*Input, error) {
	limits := guard.Limits(maxMemory)
	guard.ApplyGoLimit(limits) // the decoder's garbage is collected near the limit, not mapped past it
	lim, per := imageproc.DefaultLimits(), guard.DecodeBytesPerPixel(guard.SniffFormat(path))
	var bind *guard.Limit
	for i := range limits {
		if fit := max(limits[i].Free, 0) / per; fit < lim.MaxPixels {
			lim.MaxPixels, bind = max(fit, 1), &limits[i]
		}
	}
	img, err := imageproc.Load(path, lim)
	if err != nil {
		if bind != nil && strings.Contains(err.Error(), "more than the limit of") {
			return nil, guard.DecodeRefused(path, err, per, *bind)
		}
		return nil, err
	}
	pixels, width := guard.PageBound(img.H, img.W, ck.Pre)
	c := ck.Config
	patches := (pixels + int64(c.PatchSize*c.PatchSize) - 1) / int64(c.PatchSize*c.PatchSize)
	// Preprocess holds the decoded image (made: what the process maps now has it), the
	// horizontal pass (resized width x height), the resized image and the page's pixel_values
	// at once; the limits are read again, the decoder's garbage collected.
	pixelValues := 4 * patches * int64(c.PatchDim())
	est := guard.MemoryEstimate{Activations: int64(len(img.Pix)) + 3*width*int64(img.H) + 3*pixels + pixelValues,
		Held: int64(len(img.Pix)), Largest: pixelValues}
	for _, l := range guard.Limits(maxMemory) {
		if need := l.Need(est); need > l.Free {
			return nil, fmt.Errorf("%s: a %dx%d image makes a page of up to %d patches (max pixels %d) whose preprocessing would hold about %s, more than %s: %s; lower max pixels",
				path, img.W, img.H, patches, ck.Pre.MaxPixels, guard.FormatBytes(need), l.Why, l.Needs(need))
		}
	}
	page, err := imageproc.Preprocess(img, ck.Pre)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &Input{Pixels: page.Pixels, Grids: []geom.Grid{{T: page.Grid[0], H: page.Grid[1], W: page.Grid[2]}}, Image: page,
		Note: img.Note, Path: path}, nil // Note: what transformers would see otherwise (a 16-bit gray PNG)
}
