package control

// maps.go: the maps the row service makes of attention beyond one query's rows, each
// computed off the UI goroutine and kept until the next one is asked for: the attention to
// the query (a column of the attention matrix), and attention rollout — through a table built
// once per run and setting (probe.RolloutTable: the product of every block's head-fused
// attention, folded in block by block in the background as blocks finish, so a click or a
// hover reads the rollout of any query in microseconds instead of recomputing every block's
// attention for it, seconds at 1,900 patches). A block below the table's last one is read
// from its history, or (past its memory) computed for the query alone. The whole-image
// rollout (the mean over the queries of a segment: Qwen has no CLS token) is a row of the
// same table.
//
// Invariant: a map is served only for the run (Store) and the block, head, query, fusion and
// discard it was computed for, and a table never for a block it has not folded in. Mutation
// that would silently break it: keeping the table across a change of fusion or discard (or a
// new run) — the map would show the rollout of other settings under the new caption.

import (
	"context"
	"errors"
	"fmt"

	"github.com/turbospark/inspector/engine/probe"
)

// rolloutHistory is the memory a table keeps for earlier blocks' products (rows of a block
// below the last one): all 27 blocks of an 8B tower at 1,024 patches, a few at 5,120.
const rolloutHistory = 256 << 20

// derivedMaps are the service's maps of attention and their jobs.
type derivedMaps struct {
	attTo   mapJob       // the attention-to column
	rollout mapJob       // the rollout of one query, where the table keeps no row for it
	table   rolloutTable // rollout of every query, built once per run and setting
}

// reset forgets every map (a new run) and drops the computations in flight.
func (m *derivedMaps) reset() {
	m.rollout.reset()
	m.attTo.reset()
	m.table.build.Cancel()
	m.table = rolloutTable{}
}

// landed redraws the panels (Ready) once a map has come.
func (c *Rows) landed() {
	if c.Ready != nil {
		c.Ready()
	}
}

// AttentionTo is how much every patch of st's run attends to query in block (head, or the
// mean of heads when head < 0): column query of the attention matrix. It is the column (or
// its error) once computed; nil while it is computed off the UI goroutine (asking again
// meanwhile changes nothing), and Ready redraws when it lands.
func (c *Rows) AttentionTo(st *probe.Store, block, head, query int) ([]float32, error) {
	return c.maps.attTo.get(c.host, attentionToKey(st, block, head, query), func(ctx context.Context) ([]float32, error) {
		return st.AttentionColumn(ctx, block, head, query)
	}, c.landed)
}

// HasAttentionTo says whether the column of block, head and query of st's run has landed.
func (c *Rows) HasAttentionTo(st *probe.Store, block, head, query int) bool {
	m := &c.maps.attTo
	return m.key == attentionToKey(st, block, head, query) && m.vals != nil
}

func attentionToKey(st *probe.Store, block, head, query int) string {
	return fmt.Sprintf("%p/%d/%d/%d", st, block, head, query)
}

// RolloutMap is what the service has of a rollout: the map, or why not yet.
type RolloutMap struct {
	Row []float32
	Err error
	// Building: the table has not reached the block; Folded blocks are in, and Frac of the
	// next one.
	Building bool
	Folded   int
	Frac     float64
	// Computing: the block is below the table's history and the query's own rollout is
	// computed.
	Computing bool
}

// Rollout is the rollout of query (whole: of the whole image) from block 0 to block under o,
// read from the table of st's run, built in the background up to block upTo (Ready redraws as
// blocks are folded in).
func (c *Rows) Rollout(st *probe.Store, o probe.RolloutOptions, upTo, block, query int, whole bool) RolloutMap {
	t, err := c.maps.table.table(c.host, st, o, upTo, c.landed)
	if err != nil {
		return RolloutMap{Err: err}
	}
	if n := t.Blocks(); n <= block {
		done, frac := t.Progress()
		return RolloutMap{Building: true, Folded: done, Frac: frac}
	}
	var row []float32
	switch {
	case whole:
		row, err = t.WholeAt(block)
	case t.Blocks()-1 == block:
		row, _ = t.Row(query)
	default:
		row, err = t.RowAt(query, block)
	}
	if errors.Is(err, probe.ErrRowNotKept) { // a block below the table's history: this query alone
		return c.queryRollout(st, o, block, query)
	}
	return RolloutMap{Row: row, Err: err}
}

// queryRollout is the rollout of query alone, computed off the UI goroutine.
func (c *Rows) queryRollout(st *probe.Store, o probe.RolloutOptions, block, query int) RolloutMap {
	key := fmt.Sprintf("%p/%d/%d/%v/%v", st, block, query, o.Fusion, o.Discard)
	vals, err := c.maps.rollout.get(c.host, key, func(ctx context.Context) ([]float32, error) {
		return st.Rollout(ctx, query, block, o)
	}, c.landed)
	return RolloutMap{Row: vals, Err: err, Computing: vals == nil && err == nil}
}

// rolloutTable is the service's table and its build. UI goroutine only.
type rolloutTable struct {
	t     *probe.RolloutTable
	store *probe.Store
	opts  probe.RolloutOptions
	build Latest
	err   error
}

// table is the table of st's run and options o, built (in the background) up to block upTo;
// nil with the error when it cannot be made. landed redraws as blocks are folded in.
func (r *rolloutTable) table(host Host, st *probe.Store, o probe.RolloutOptions, upTo int, landed func()) (*probe.RolloutTable, error) {
	if r.t == nil || r.store != st || r.opts != o {
		r.build.Cancel()
		r.store, r.opts, r.err = st, o, nil
		t, err := st.NewRolloutTable(probe.TableOptions{Rollout: o, History: rolloutHistory})
		r.t, r.err = t, err
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.t.Blocks() > upTo || r.build.Busy() {
		return r.t, nil
	}
	t := r.t
	r.build.Start(host, func(ctx context.Context) (any, error) {
		return nil, t.Build(ctx, upTo, func(done, of int) { host.Do(landed) }) // each block as it is folded in
	}, func(_ any, err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			r.err = err
		}
		landed()
	})
	return r.t, nil
}

// mapJob is one map computed off the UI goroutine (Latest): the map of the last key asked
// for, once it has landed.
type mapJob struct {
	job        Latest
	key, asked string // of the map kept, of the one in flight
	vals       []float32
	err        error
}

// get is key's map if it has landed (or its error); else it starts computing it (once per
// key: asking again while it is computed changes nothing), and landed redraws when it is in.
func (m *mapJob) get(host Host, key string, compute func(context.Context) ([]float32, error), landed func()) ([]float32, error) {
	if key == m.key {
		return m.vals, m.err
	}
	if key == m.asked && m.job.Busy() {
		return nil, nil
	}
	m.asked = key
	m.job.Start(host, func(ctx context.Context) (any, error) { return compute(ctx) }, func(v any, err error) {
		m.key, m.err, m.vals = key, err, nil
		if err == nil {
			m.vals = v.([]float32)
		}
		landed()
	})
	return nil, nil
}

// reset forgets the map (a new page) and drops one in flight.
func (m *mapJob) reset() {
	m.job.Cancel()
	m.key, m.asked, m.vals, m.err = "", "", nil, nil
}
