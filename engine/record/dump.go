package record

// dump.go writes the CLI dump contract (DESIGN.md): float32 pixel_values [S, C*T*P*P],
// grid_thw [3] int64, embed [S, D], blocks.{i}.out [S, D], merger [S/4, O],
// deepstack.{k} [S/4, O], with a query, blocks.{i}.attn_row [H, S], and with taps asked
// for (--taps), blocks.{i}.{tap} [S, W] for each (W = D, or I for ffn_act;
// engine/tower/tap.go). A run that dropped tokens (engine/intervene/tokendrop.go) adds
// kept_units [K] int64 (the merged tokens that went on, in the merger's row order): the
// dropped ones are 0 rows of merger and deepstack after the drop, a dropped row's later
// outputs its output at the drop, its later attention rows 0. A dump is made of a finished
// run (NewDump, WriteDump: functions of the run, which lives in engine/tower).
//
// Invariant: every tensor is in sequence (merge-window) order, the order of pixel_values,
// whatever order the blocks saw the rows in (Qwen2.5-VL's windows: geom.Layout.ToProcessorOrder),
// and the query is a pixel_values row. The mutation that would silently break it: writing
// attention rows in raster order, or a window-ordered run's rows as the blocks held them.

import (
	"fmt"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/tower"
)

// Dump is a finished run's tensors, immutable: what `run --dump` and the window's export
// write. It holds no backend memory, so it outlives the run.
type Dump struct {
	config    model.Config
	layout    *geom.Layout
	pixels    []float32
	embed     []float32
	outputs   [][]float32
	merger    []float32
	deepstack [][]float32
	probes    *probe.Store
	// provenance (provenance.go)
	checkpoint, image, backend string
	page                       *imageproc.Page
	settings                   tower.Settings
	keptUnits                  []int64 // a token drop's kept merged tokens (nil: none)
}

// NewDump is r's tensors; it needs a finished run with every block's output kept.
func NewDump(r *tower.Run) (*Dump, error) {
	c := r.Config()
	outputs := r.Probes.Outputs()
	if r.Merger == nil || len(outputs) != c.Depth {
		return nil, fmt.Errorf("dump: the run has not finished with outputs kept (%d of %d blocks kept)", len(outputs), c.Depth)
	}
	if len(r.Layout.Grids) != 1 {
		return nil, fmt.Errorf("dump: one image per dump (this run has %d grids)", len(r.Layout.Grids))
	}
	return &Dump{config: c, layout: r.Layout, pixels: r.Input.Pixels, embed: r.Embed, outputs: outputs,
		merger: r.Merger, deepstack: r.Deepstack, probes: r.Probes, keptUnits: r.KeptUnits(),
		checkpoint: r.Engine().Checkpoint.Dir, image: r.Input.Path, page: r.Input.Image, settings: r.Settings(), backend: r.Engine().Backend.Name()}, nil
}

// WriteDump writes r's tensors to path; query < 0 leaves out the attention rows; taps are
// written as blocks.{i}.{tap} (out is always there as blocks.{i}.out). It needs a finished
// run that kept the outputs (and q|k for rows, and the taps).
func WriteDump(r *tower.Run, path string, query int, taps tower.TapSet) error {
	d, err := NewDump(r)
	if err != nil {
		return err
	}
	return d.Write(path, query, taps)
}

// Write writes the tensors to path; query < 0 leaves out the attention rows; taps (kept by
// the run) are written as blocks.{i}.{tap}.
func (d *Dump) Write(path string, query int, taps tower.TapSet) error {
	c := d.config
	S, D, O := d.layout.Rows(), c.Hidden, c.OutHidden
	g := d.layout.Grids[0]
	merged := len(d.merger) / O
	ts := []safetensors.Tensor{
		safetensors.F32Tensor("pixel_values", []int{S, c.PatchDim()}, d.pixels),
		safetensors.I64Tensor("grid_thw", []int{3}, []int64{int64(g.T), int64(g.H), int64(g.W)}),
		safetensors.F32Tensor("embed", []int{S, D}, d.layout.ToProcessorOrder(d.embed, D)),
	}
	for i, out := range d.outputs {
		ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("blocks.%d.out", i), []int{S, D}, d.layout.ToProcessorOrder(out, D)))
	}
	more, err := d.taps(taps)
	if err != nil {
		return err
	}
	ts = append(ts, more...)
	if query >= 0 {
		rows, err := d.attentionRows(query)
		if err != nil {
			return err
		}
		ts = append(ts, rows...)
	}
	ts = append(ts, safetensors.F32Tensor("merger", []int{merged, O}, d.merger))
	for k, ds := range d.deepstack {
		ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("deepstack.%d", k), []int{merged, O}, ds))
	}
	if d.keptUnits != nil {
		ts = append(ts, safetensors.I64Tensor("kept_units", []int{len(d.keptUnits)}, d.keptUnits))
	}
	return safetensors.WriteFile(path, ts, d.provenance(query))
}

// taps are blocks.{i}.{tap} of every block for each tap of taps but out (already written).
func (d *Dump) taps(taps tower.TapSet) ([]safetensors.Tensor, error) {
	S := d.layout.Rows()
	var ts []safetensors.Tensor
	for _, t := range taps.List() {
		if t == tower.TapOut {
			continue
		}
		for i := range d.config.Depth {
			x, err := d.probes.Tap(t.String(), i)
			if err != nil {
				return nil, fmt.Errorf("dump: %w", err)
			}
			w := t.Width(d.config)
			ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("blocks.%d.%s", i, t), []int{S, w}, d.layout.ToProcessorOrder(x, w)))
		}
	}
	return ts, nil
}

func (d *Dump) attentionRows(query int) ([]safetensors.Tensor, error) {
	c, S := d.config, d.layout.Rows()
	if query >= S {
		return nil, fmt.Errorf("attention query %d: the image has %d patches", query, S)
	}
	var ts []safetensors.Tensor
	q := d.layout.RowOfProcessor(query) // the row that holds pixel_values row query
	for i := 0; i < c.Depth; i++ {
		rows := make([]float32, 0, c.Heads*S)
		for h := 0; h < c.Heads; h++ {
			if d.probes.Dropped(i, q) { // dropped before block i: it attended to nothing there
				rows = append(rows, make([]float32, S)...)
				continue
			}
			row, err := d.probes.AttentionRow(i, h, q)
			if err != nil {
				return nil, err
			}
			rows = append(rows, d.layout.ToProcessorOrder(row, 1)...)
		}
		ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("blocks.%d.attn_row", i), []int{c.Heads, S}, rows))
	}
	return ts, nil
}
