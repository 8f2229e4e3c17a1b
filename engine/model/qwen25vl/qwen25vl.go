// Package qwen25vl is the Qwen2.5-VL family (transformers' Qwen2_5_VisionTransformerPretrainedModel):
// RMS norms (eps 1e-6, weight only) in the blocks and the merger's ln_q; a gated MLP
// down_proj(silu(gate_proj(x)) * up_proj(x)) with biases; no position table, no patch bias;
// patches of 14; window attention in every block but fullatt_block_indexes. Before the blocks
// the rows are regrouped by windows of window_size/merge/patch merge units a side
// (geom.Layout.UseWindowOrder, transformers' get_vision_window_index), and the merger's rows
// are handed back in the processor's order (its reverse_indices). Its whole definition is this
// table; the block is engine/tower/graph.go's.
//
// Invariant: the windows tile each frame in the window order, and the full-attention blocks
// attend within whole frames of that same order.
// Mutation that would silently break it: windowing the full-attention blocks too (or none):
// every shape agrees and the maps look local (engine's TestParityQwen25VLSeesTheMutations).
package qwen25vl

import (
	"fmt"
	"slices"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/model/qwen2vl"
)

// Family is Qwen2.5-VL's table.
var Family = &model.Family{
	Name:       "Qwen2.5-VL",
	ModelTypes: []string{"qwen2_5_vl"},
	Block: [model.Roles]string{"norm1.weight", "", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "", "mlp.gate_proj.weight", "mlp.gate_proj.bias", "mlp.down_proj.weight", "mlp.down_proj.bias",
		"mlp.up_proj.weight", "mlp.up_proj.bias"},
	Merger:     [6]string{"ln_q.weight", "", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"},
	WidthNames: [3]string{"hidden_size", "intermediate_size", "out_hidden_size"},
	RMSNorm:    true,
	Gated:      true,
	MLPAct:     "silu",
	MLPForm:    backend.GELUSiLU,
	Vision: func(v *model.VisionJSON, c *model.Config) error {
		if err := model.Required(model.Field{Name: "hidden_size", Src: v.HiddenSize, Dst: &c.Hidden},
			model.Field{Name: "intermediate_size", Src: v.IntermediateSize, Dst: &c.Intermediate},
			model.Field{Name: "out_hidden_size", Src: v.OutHiddenSize, Dst: &c.OutHidden}); err != nil {
			return err
		}
		c.PatchSize = model.IntOr(v.PatchSize, 14)
		c.WindowSize = model.IntOr(v.WindowSize, 112)
		c.FullAttBlocks = v.FullAttBlockIndexes
		if v.FullAttBlockIndexes == nil {
			c.FullAttBlocks = []int{7, 15, 23, 31} // Qwen2_5_VLVisionConfig's default
		}
		return nil
	},
	Check: func(c model.Config) error {
		if c.WindowSize <= 0 || c.WindowUnits() < 1 {
			return fmt.Errorf("vision_config.window_size %d is smaller than one merge unit (%d px)", c.WindowSize, c.MergeSize*c.PatchSize)
		}
		for i, b := range c.FullAttBlocks {
			if b < 0 || b >= c.Depth || (i > 0 && b <= c.FullAttBlocks[i-1]) {
				return fmt.Errorf("vision_config.fullatt_block_indexes %v: want increasing blocks of 0..%d", c.FullAttBlocks, c.Depth-1)
			}
		}
		return nil
	},
	Arrange: func(c model.Config, lay *geom.Layout) error {
		windows, err := lay.UseWindowOrder(c.WindowUnits())
		if err != nil {
			return err
		}
		var windowed []int
		for b := range c.Depth {
			if !slices.Contains(c.FullAttBlocks, b) {
				windowed = append(windowed, b)
			}
		}
		return lay.SetWindows(windows, windowed, c.Depth)
	},
	Defaults: func(c *model.Config) {
		model.SharedDefaults(c)
		c.PatchSize, c.HiddenAct = 14, "silu"
		c.FullAttBlocks = append([]int(nil), c.FullAttBlocks...)
	},
	// Files: hidden_size the block width, out_hidden_size the merger's output, window_size,
	// fullatt_block_indexes; the processor is Qwen2-VL's.
	Files: func(c model.Config, torchDType string) (map[string]any, map[string]any, error) {
		vision := map[string]any{
			"depth": c.Depth, "hidden_size": c.Hidden, "num_heads": c.Heads, "intermediate_size": c.Intermediate,
			"out_hidden_size": c.OutHidden, "in_chans": c.InChannels, "patch_size": c.PatchSize, "spatial_patch_size": c.PatchSize,
			"temporal_patch_size": c.TemporalPatchSize, "spatial_merge_size": c.MergeSize, "hidden_act": c.HiddenAct,
			"window_size": c.WindowSize, "fullatt_block_indexes": c.FullAttBlocks, "tokens_per_second": 2,
		}
		cfg := map[string]any{
			"architectures": []string{"Qwen2_5_VLForConditionalGeneration"}, "model_type": c.ModelType, "torch_dtype": torchDType,
			"hidden_size": c.OutHidden, "vision_config": vision,
		}
		return cfg, qwen2vl.Processor(c, "Qwen2_5_VLProcessor"), nil
	},
}

func init() { model.Register(Family) }
