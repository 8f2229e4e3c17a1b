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
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/probe"
)

// rowWait is how long the UI goroutine waits for rows it asked for before drawing the last
// ones marked busy: about half a 60 Hz frame, so a hover's map (one query's rows of every
// head of a block: ~2-5 ms at 5,120 patches) is painted in the frame that handled the
// hover, and a slower computation (a shared scale over every block, a probe held at the gate
// while a block runs) costs the window no more than this.
const rowWait = 8 * time.Millisecond

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

// rowCache keeps the last rowCacheSize QueryRows results — a click, a hover, the head grid,
// the top-k list and a shared scale all ask for the same rows — and computes missing ones in
// the background, never on the UI goroutine: ensure starts one job for what the view asks
// for now (a job for other rows is cancelled: the latest request wins) and, when it lands,
// calls ready (the panels redraw). UI goroutine only.
type rowCache struct {
	entries map[rowKey]headRows
	order   []rowKey // oldest first
	job     latest   // the rows in the making
	asked   map[rowKey]bool
	failed  map[rowKey]error // rows that could not be computed (said by ensure)
	ready   func()           // redraws the panels that show rows
}

// lookup is a finished entry.
func (c *rowCache) lookup(k rowKey) (headRows, bool) {
	e, ok := c.entries[k]
	return e, ok
}

// ensure says whether every key's rows are here; the missing ones are computed off the UI
// goroutine (one job: it replaces a job for other keys) and ready is called when they land.
// A key whose computation failed gives its error.
func (c *rowCache) ensure(ctl *Controller, keys ...rowKey) (bool, error) {
	var missing []rowKey
	for _, k := range keys {
		if err := c.failed[k]; err != nil {
			return false, err
		}
		if _, ok := c.entries[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return true, nil
	}
	inFlight := c.job.busy()
	for _, k := range missing {
		inFlight = inFlight && c.asked[k]
	}
	if inFlight {
		return false, nil
	}
	c.asked = map[rowKey]bool{}
	for _, k := range missing {
		c.asked[k] = true
	}
	v, err, done := c.job.startWithin(ctl, rowWait, func(ctx context.Context) (any, error) {
		out := make([]headRows, len(missing))
		for i, k := range missing {
			rows, mean, err := k.store.QueryRows(ctx, k.block, k.query)
			if err != nil {
				return nil, err
			}
			out[i] = headRows{rows, mean}
		}
		return out, nil
	}, func(v any, err error) {
		c.keep(missing, v, err)
		if c.ready != nil {
			c.ready()
		}
	})
	if !done {
		return false, nil
	}
	c.keep(missing, v, err) // in time for this frame: the caller draws them, no redraw
	return err == nil, err
}

// keep files the rows computed for keys (or the error that stopped them).
func (c *rowCache) keep(keys []rowKey, v any, err error) {
	c.asked = nil
	if err != nil {
		if c.failed == nil || len(c.failed) > rowCacheSize {
			c.failed = map[rowKey]error{}
		}
		for _, k := range keys {
			c.failed[k] = err
		}
		return
	}
	for i, e := range v.([]headRows) {
		c.put(keys[i], e)
	}
}

// errComputing says rows are being computed: the panel draws what it had, marked busy.
var errComputing = errors.New("computing…")

// rowsOf is every head's rows of query in block when they are here (errComputing while they
// are computed off the UI goroutine).
func (c *rowCache) rowsOf(ctl *Controller, s *Snapshot, block, query int) (headRows, error) {
	k := rowKey{s.Probes, block, query}
	ok, err := c.ensure(ctl, k)
	if err != nil {
		return headRows{}, err
	}
	if !ok {
		return headRows{}, errComputing
	}
	return c.entries[k], nil
}

// put adds an entry, dropping the oldest past the bound.
func (c *rowCache) put(k rowKey, e headRows) {
	if c.entries == nil {
		c.entries = map[rowKey]headRows{}
	}
	if _, ok := c.entries[k]; ok {
		return
	}
	if len(c.order) >= rowCacheSize {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[k], c.order = e, append(c.order, k)
}

// get is every head's row of query in block, and the mean, computed here if it is not kept:
// for exports (a user's explicit action that waits for its file), never for drawing.
func (c *rowCache) get(s *Snapshot, block, query int) (headRows, error) {
	k := rowKey{s.Probes, block, query}
	if e, ok := c.entries[k]; ok {
		return e, nil
	}
	rows, mean, err := s.Probes.QueryRows(context.Background(), block, query)
	if err != nil {
		return headRows{}, err
	}
	e := headRows{rows, mean}
	c.put(k, e)
	return e, nil
}

// row is one head's row, or the mean of heads when head < 0 (get: exports).
func (c *rowCache) row(s *Snapshot, block, head, query int) ([]float32, error) {
	e, err := c.get(s, block, query)
	if err != nil {
		return nil, err
	}
	return e.pick(head)
}

// pick is one head's row, or the mean when head < 0.
func (e headRows) pick(head int) ([]float32, error) {
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
