package engine

// dump.go writes the CLI dump contract (DESIGN.md): float32 pixel_values [S, C*T*P*P],
// grid_thw [3] int64, embed [S, D], blocks.{i}.out [S, D], merger [S/4, O],
// deepstack.{k} [S/4, O], and with a query, blocks.{i}.attn_row [H, S].
//
// Invariant: every tensor is in sequence (merge-window) order, the order of pixel_values.
// The mutation that would silently break it: writing attention rows in raster order.

import (
	"fmt"

	"github.com/turbospark/inspector/engine/safetensors"
)

// WriteDump writes the run's tensors; query < 0 leaves out the attention rows. It needs
// KeepOutputs (and KeepAttention for rows) and a finished run.
func (r *Run) WriteDump(path string, query int) error {
	c := r.Config()
	S, D, O := r.Layout.Rows(), c.Hidden, c.OutHidden
	if r.Merger == nil || len(r.Outputs) != c.Depth {
		return fmt.Errorf("dump: the run has not finished with outputs kept (%d of %d blocks kept)", len(r.Outputs), c.Depth)
	}
	if len(r.Layout.Grids) != 1 {
		return fmt.Errorf("dump: one image per dump (this run has %d grids)", len(r.Layout.Grids))
	}
	g := r.Layout.Grids[0]
	merged := len(r.Merger) / O
	ts := []safetensors.Tensor{
		safetensors.F32Tensor("pixel_values", []int{S, c.PatchDim()}, r.Input.Pixels),
		safetensors.I64Tensor("grid_thw", []int{3}, []int64{int64(g.T), int64(g.H), int64(g.W)}),
		safetensors.F32Tensor("embed", []int{S, D}, r.Embed),
	}
	for i, out := range r.Outputs {
		ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("blocks.%d.out", i), []int{S, D}, out))
	}
	if query >= 0 {
		rows, err := r.attentionDump(query)
		if err != nil {
			return err
		}
		ts = append(ts, rows...)
	}
	ts = append(ts, safetensors.F32Tensor("merger", []int{merged, O}, r.Merger))
	for k, d := range r.Deepstack {
		ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("deepstack.%d", k), []int{merged, O}, d))
	}
	return safetensors.WriteFile(path, ts, map[string]string{"producer": "turbospark inspector"})
}

func (r *Run) attentionDump(query int) ([]safetensors.Tensor, error) {
	c, S := r.Config(), r.Layout.Rows()
	if query >= S {
		return nil, fmt.Errorf("attention query %d: the image has %d patches", query, S)
	}
	var ts []safetensors.Tensor
	for i := 0; i < c.Depth; i++ {
		rows := make([]float32, 0, c.Heads*S)
		for h := 0; h < c.Heads; h++ {
			row, err := r.AttentionRow(i, h, query)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row...)
		}
		ts = append(ts, safetensors.F32Tensor(fmt.Sprintf("blocks.%d.attn_row", i), []int{c.Heads, S}, rows))
	}
	return ts, nil
}
