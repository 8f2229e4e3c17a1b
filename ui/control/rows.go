package control

// rows.go: the row service — the window's one source of attention rows and of the maps made
// of them. The image panel, the attention tab, the What if tab and the exports all ask it;
// none of them keeps rows of its own, and none reads another's. It keeps the last
// rowCacheSize QueryRows results (a click, a hover, the head grid, the top-k list and a
// shared scale all ask for the same rows) and computes missing ones off the UI goroutine:
// one job for what the view asks now (a job for other rows is cancelled: the latest request
// wins), and Ready redraws the panels when they land. Exports, a user's explicit action that
// waits for its file, compute what is missing in the call (Wait). The maps made of rows
// (attention to the query, rollout) and the block x head statistics are maps.go's and
// headstats.go's, behind the same service.
//
// Invariant: a kept attention row is found only under the Store it was computed from (a
// pointer that is new for every run) and the block and query it is of. The mutation that
// would silently break it: keying the cache by block and query alone — after a re-run (new
// settings, same page) the panels would show the old run's rows under the new run.

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// HeadRows are every head's attention row of one query and their mean (probe.QueryRows).
type HeadRows struct {
	Rows [][]float32
	Mean []float32
}

// Pick is one head's row, or the mean when head < 0.
func (e HeadRows) Pick(head int) ([]float32, error) {
	if head < 0 {
		return e.Mean, nil
	}
	if head >= len(e.Rows) {
		return nil, fmt.Errorf("head %d outside %d heads", head, len(e.Rows))
	}
	return e.Rows[head], nil
}

// ErrComputing says rows are being computed: the panel draws what it had, marked busy.
var ErrComputing = errors.New("computing…")

// Rows is the row service. UI goroutine only.
type Rows struct {
	host    Host
	entries map[rowKey]HeadRows
	order   []rowKey // oldest first
	job     Latest   // the rows in the making
	asked   map[rowKey]bool
	failed  map[rowKey]error // rows that could not be computed (said by ensure)

	// Ready redraws the panels that show rows or maps, when some computed off the UI
	// goroutine have landed.
	Ready func()

	maps  derivedMaps // attention to the query, rollout: maps.go
	stats HeadStats   // the block x head statistics: headstats.go
}

// NewRows is the service of the window whose controller is host.
func NewRows(host Host) *Rows { return &Rows{host: host} }

// NewRun forgets the maps and statistics of the run shown before (a new run replaces it)
// and drops their computations in flight; the rows stay, found only under their own run.
func (c *Rows) NewRun() {
	c.maps.reset()
	c.stats.reset(nil)
}

// Busy says whether rows are being computed.
func (c *Rows) Busy() bool { return c.job.Busy() }

// Has says whether the rows of query in block of st's run are kept.
func (c *Rows) Has(st *probe.Store, block, query int) bool {
	_, ok := c.entries[rowKey{st, block, query}]
	return ok
}

// Of is every head's rows of query in block when they are here (ErrComputing while they
// are computed off the UI goroutine).
func (c *Rows) Of(st *probe.Store, block, query int) (HeadRows, error) {
	k := rowKey{st, block, query}
	ok, err := c.ensure(k)
	if err != nil {
		return HeadRows{}, err
	}
	if !ok {
		return HeadRows{}, ErrComputing
	}
	return c.entries[k], nil
}

// HeadsOf is every head's attention row of query in blocks 0..blocks-1, block-major
// (ErrComputing while some are computed off the UI goroutine).
func (c *Rows) HeadsOf(st *probe.Store, blocks, query int) ([][]float32, error) {
	keys := make([]rowKey, blocks)
	for b := range keys {
		keys[b] = rowKey{st, b, query}
	}
	ok, err := c.ensure(keys...)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrComputing
	}
	var maps [][]float32
	for _, k := range keys {
		maps = append(maps, c.entries[k].Rows...)
	}
	return maps, nil
}

// ensure says whether every key's rows are here; the missing ones are computed off the UI
// goroutine (one job: it replaces a job for other keys) and Ready is called when they land.
// A key whose computation failed gives its error.
func (c *Rows) ensure(keys ...rowKey) (bool, error) {
	missing, err := c.missing(keys)
	if err != nil || len(missing) == 0 {
		return err == nil, err
	}
	if c.inFlight(missing) {
		return false, nil
	}
	c.asked = map[rowKey]bool{}
	for _, k := range missing {
		c.asked[k] = true
	}
	v, err, done := c.job.StartWithin(c.host, rowWait, func(ctx context.Context) (any, error) {
		return queryRows(ctx, missing)
	}, func(v any, err error) {
		c.keep(missing, v, err)
		if c.Ready != nil {
			c.Ready()
		}
	})
	if !done {
		return false, nil
	}
	c.keep(missing, v, err) // in time for this frame: the caller draws them, no redraw
	return err == nil, err
}

// missing are the keys whose rows are not kept, or the error of one that failed.
func (c *Rows) missing(keys []rowKey) ([]rowKey, error) {
	var missing []rowKey
	for _, k := range keys {
		if err := c.failed[k]; err != nil {
			return nil, err
		}
		if _, ok := c.entries[k]; !ok {
			missing = append(missing, k)
		}
	}
	return missing, nil
}

// inFlight says whether the job in flight computes every one of keys.
func (c *Rows) inFlight(keys []rowKey) bool {
	in := c.job.Busy()
	for _, k := range keys {
		in = in && c.asked[k]
	}
	return in
}

// queryRows computes every key's rows.
func queryRows(ctx context.Context, keys []rowKey) (any, error) {
	out := make([]HeadRows, len(keys))
	for i, k := range keys {
		rows, mean, err := k.store.QueryRows(ctx, k.block, k.query)
		if err != nil {
			return nil, err
		}
		out[i] = HeadRows{rows, mean}
	}
	return out, nil
}

// keep files the rows computed for keys (or the error that stopped them).
func (c *Rows) keep(keys []rowKey, v any, err error) {
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
	for i, e := range v.([]HeadRows) {
		c.put(keys[i], e)
	}
}

// put adds an entry, dropping the oldest past the bound.
func (c *Rows) put(k rowKey, e HeadRows) {
	if c.entries == nil {
		c.entries = map[rowKey]HeadRows{}
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

// Wait is every head's row of query in block, and the mean, computed here if it is not
// kept: for exports (a user's explicit action that waits for its file), never for drawing.
func (c *Rows) Wait(st *probe.Store, block, query int) (HeadRows, error) {
	k := rowKey{st, block, query}
	if e, ok := c.entries[k]; ok {
		return e, nil
	}
	rows, mean, err := st.QueryRows(context.Background(), block, query)
	if err != nil {
		return HeadRows{}, err
	}
	e := HeadRows{rows, mean}
	c.put(k, e)
	return e, nil
}

// WaitRow is one head's row, or the mean of heads when head < 0 (Wait: exports).
func (c *Rows) WaitRow(st *probe.Store, block, head, query int) ([]float32, error) {
	e, err := c.Wait(st, block, query)
	if err != nil {
		return nil, err
	}
	return e.Pick(head)
}
