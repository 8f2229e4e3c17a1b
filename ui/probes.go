package ui

// probes.go adapts the engine's probes to what the panels draw. The math lives in
// engine/probe; these only pick, convert, name and keep the last few results.
//
// Invariant: a cached attention row is found only under the Store it was computed from (a
// pointer that is new for every run) and the block and query it is of. The mutation that
// would silently break it: keying the cache by block and query alone — after a re-run (new
// settings, same page) the panels would show the old run's rows under the new run.

import (
	"context"
	"fmt"
	"image"

	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/probe"
)

// rowCacheSize bounds the (block, query) entries kept: every block of one query (a shared
// scale over blocks), a little more.
const rowCacheSize = 48

// rowKey is one block and query of one run.
type rowKey struct {
	store        *probe.Store
	block, query int
}

// headRows are every head's attention row of one query and their mean (probe.QueryRows).
type headRows struct {
	rows [][]float32
	mean []float32
}

// rowCache keeps the last rowCacheSize QueryRows results: a click, a hover, the head grid, the
// top-k list and a shared scale all ask for the same rows. UI goroutine only.
type rowCache struct {
	entries map[rowKey]headRows
	order   []rowKey // oldest first
}

// get is every head's row of query in block, and the mean, from one pass over the keys.
func (c *rowCache) get(s *Snapshot, block, query int) (headRows, error) {
	k := rowKey{s.Probes, block, query}
	if e, ok := c.entries[k]; ok {
		return e, nil
	}
	rows, mean, err := s.Probes.QueryRows(context.Background(), block, query)
	if err != nil {
		return headRows{}, err
	}
	if c.entries == nil {
		c.entries = map[rowKey]headRows{}
	}
	if len(c.order) >= rowCacheSize {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	e := headRows{rows, mean}
	c.entries[k], c.order = e, append(c.order, k)
	return e, nil
}

// row is one head's row, or the mean of heads when head < 0.
func (c *rowCache) row(s *Snapshot, block, head, query int) ([]float32, error) {
	e, err := c.get(s, block, query)
	if err != nil {
		return nil, err
	}
	if head < 0 {
		return e.mean, nil
	}
	if head >= len(e.rows) {
		return nil, fmt.Errorf("head %d outside %d heads", head, len(e.rows))
	}
	return e.rows[head], nil
}

func topK(row []float32, k int) []int { return probe.TopK(row, k) }

// rgbImage wraps the preprocessor's resized RGB as an image.Image.
func rgbImage(src *imageproc.RGB) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, src.W, src.H))
	for i := 0; i < src.W*src.H; i++ {
		copy(img.Pix[4*i:4*i+3], src.Pix[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return img
}
