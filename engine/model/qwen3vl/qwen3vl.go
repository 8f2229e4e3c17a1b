// Package qwen3vl is the Qwen3-VL family: Qwen3-VL, Qwen3-VL-MoE, Qwen3.5 and Qwen3.5-MoE
// (spec: shared/spec/qwen3-vl-vision.md). LayerNorms (eps 1e-6), an MLP
// linear_fc2(gelu_pytorch_tanh(linear_fc1(x))), a patch embedding with a bias plus a learned
// position table (num_position_embeddings, interpolated bilinearly to the grid), patches of
// 16, whole-frame attention in every block; deepstack mergers after some blocks (Qwen3-VL only:
// Qwen3.5 deletes them), each normalizing after the 2x2 concatenation; the final merger's
// norm before it. Its whole definition is this table; the block is engine/tower/graph.go's.
//
// Invariant: the tensor names are listed in model's role order.
// Mutation that would silently break it: defaulting deepstack_visual_indexes for Qwen3.5 too:
// its checkpoints have no deepstack mergers, and OpenCheckpoint would refuse every one.
package qwen3vl

import (
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/model"
)

// Family is Qwen3-VL's table.
var Family = &model.Family{
	Name:       "Qwen3-VL / Qwen3.5",
	ModelTypes: []string{"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"},
	Block: [model.Roles]string{"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "norm2.bias", "mlp.linear_fc1.weight", "mlp.linear_fc1.bias", "mlp.linear_fc2.weight", "mlp.linear_fc2.bias", "", ""},
	Merger:     [6]string{"norm.weight", "norm.bias", "linear_fc1.weight", "linear_fc1.bias", "linear_fc2.weight", "linear_fc2.bias"},
	WidthNames: [3]string{"hidden_size", "intermediate_size", "out_hidden_size"},
	PatchBias:  true,
	PosTable:   true,
	MLPAct:     "gelu_pytorch_tanh",
	MLPForm:    backend.GELUTanh,
	Vision: func(v *model.VisionJSON, c *model.Config) error {
		if err := model.Required(model.Field{Name: "hidden_size", Src: v.HiddenSize, Dst: &c.Hidden},
			model.Field{Name: "intermediate_size", Src: v.IntermediateSize, Dst: &c.Intermediate},
			model.Field{Name: "out_hidden_size", Src: v.OutHiddenSize, Dst: &c.OutHidden}); err != nil {
			return err
		}
		c.PatchSize = model.IntOr(v.PatchSize, 16)
		c.NumPositionEmbedding = model.IntOr(v.NumPositionEmbeddings, 2304)
		c.Deepstack = v.DeepstackIndexes
		if v.DeepstackIndexes == nil && keepsDeepstack(c.ModelType) {
			c.Deepstack = []int{8, 16, 24} // Qwen3VLVisionConfig's default
		}
		return nil
	},
	Deepstack: keepsDeepstack,
	Defaults: func(c *model.Config) {
		model.SharedDefaults(c)
		c.PatchSize, c.HiddenAct = 16, "gelu_pytorch_tanh"
	},
	Files: func(c model.Config, torchDType string) (map[string]any, map[string]any, error) {
		vision := map[string]any{
			"model_type": c.ModelType, "depth": c.Depth, "hidden_size": c.Hidden, "num_heads": c.Heads,
			"intermediate_size": c.Intermediate, "out_hidden_size": c.OutHidden, "in_channels": c.InChannels,
			"patch_size": c.PatchSize, "temporal_patch_size": c.TemporalPatchSize, "spatial_merge_size": c.MergeSize,
			"num_position_embeddings": c.NumPositionEmbedding, "hidden_act": c.HiddenAct,
			"deepstack_visual_indexes": append([]int{}, c.Deepstack...), "initializer_range": 0.02,
		}
		arch := map[string]string{"qwen3_vl": "Qwen3VLForConditionalGeneration", "qwen3_vl_moe": "Qwen3VLMoeForConditionalGeneration",
			"qwen3_5": "Qwen3_5ForConditionalGeneration", "qwen3_5_moe": "Qwen3_5MoeForConditionalGeneration"}[c.ModelType]
		cfg := map[string]any{
			"architectures": []string{arch}, "model_type": c.ModelType, "dtype": torchDType,
			"vision_config": vision, "text_config": map[string]any{"hidden_size": c.OutHidden},
		}
		pre := map[string]any{
			"size": map[string]int{"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": c.PatchSize,
			"temporal_patch_size": c.TemporalPatchSize, "merge_size": c.MergeSize,
			"image_mean": []float64{0.5, 0.5, 0.5}, "image_std": []float64{0.5, 0.5, 0.5},
			"processor_class": "Qwen3VLProcessor", "image_processor_type": "Qwen2VLImageProcessorFast",
		}
		return cfg, pre, nil
	},
}

// keepsDeepstack: Qwen3-VL keeps its deepstack mergers, Qwen3.5 deletes them.
func keepsDeepstack(modelType string) bool {
	return modelType == "qwen3_vl" || modelType == "qwen3_vl_moe"
}

func init() { model.Register(Family) }
