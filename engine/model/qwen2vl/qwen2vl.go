// Package qwen2vl is the Qwen2-VL family (transformers' Qwen2VisionTransformerPretrainedModel):
// Qwen3-VL's block with fc1/fc2 named so and quick_gelu (x*sigmoid(1.702x)) in the MLP, no bias
// on the patch embedding and no learned position table (the 2D rope alone), patches of 14,
// whole-frame attention in every block, no deepstack. config.json names the block width
// embed_dim, the merger's output hidden_size, and the MLP embed_dim*mlp_ratio wide; the
// merger's norm is ln_q (a LayerNorm) and its MLP mlp.0 / mlp.2 with the exact GELU. Its whole
// definition is this table; the block is engine/tower/graph.go's.
//
// Invariant: the MLP is int(embed_dim * mlp_ratio) wide, as transformers truncates it.
// Mutation that would silently break it: reading hidden_size as the block width (as every
// other family does): for Qwen2-VL-2B that is 1536 against the checkpoint's 1280, which
// OpenCheckpoint refuses, but a config whose two agree would run with the merger's width.
package qwen2vl

import (
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/model"
)

// Family is Qwen2-VL's table.
var Family = &model.Family{
	Name:       "Qwen2-VL",
	ModelTypes: []string{"qwen2_vl"},
	Block: [model.Roles]string{"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "norm2.bias", "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias", "", ""},
	Merger:     [6]string{"ln_q.weight", "ln_q.bias", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"},
	WidthNames: [3]string{"embed_dim", "embed_dim * mlp_ratio", "hidden_size"},
	MLPAct:     "quick_gelu",
	MLPForm:    backend.GELUQuick,
	Vision: func(v *model.VisionJSON, c *model.Config) error {
		if err := model.Required(model.Field{Name: "embed_dim", Src: v.EmbedDim, Dst: &c.Hidden},
			model.Field{Name: "hidden_size (the merger's output width)", Src: v.HiddenSize, Dst: &c.OutHidden}); err != nil {
			return err
		}
		ratio := 4.0 // Qwen2VLVisionConfig's default
		if v.MLPRatio != nil {
			ratio = *v.MLPRatio
		}
		if !(ratio > 0 && ratio <= 1024) {
			return fmt.Errorf("vision_config.mlp_ratio %v is out of range", ratio)
		}
		c.Intermediate = int(float64(c.Hidden) * ratio)
		c.PatchSize = model.IntOr(v.PatchSize, 14)
		return nil
	},
	Defaults: func(c *model.Config) {
		model.SharedDefaults(c)
		c.PatchSize, c.HiddenAct = 14, "quick_gelu"
	},
	// Files: its own names (embed_dim for the block width, hidden_size for the merger's output,
	// mlp_ratio, in_chans as the hub files spell it) and the hub processor.
	Files: func(c model.Config, torchDType string) (map[string]any, map[string]any, error) {
		if c.Intermediate%c.Hidden != 0 {
			return nil, nil, fmt.Errorf("Qwen2-VL's MLP is embed_dim * mlp_ratio wide: %d is not a multiple of %d", c.Intermediate, c.Hidden)
		}
		vision := map[string]any{
			"depth": c.Depth, "embed_dim": c.Hidden, "num_heads": c.Heads, "mlp_ratio": c.Intermediate / c.Hidden,
			"hidden_size": c.OutHidden, "in_chans": c.InChannels, "patch_size": c.PatchSize, "spatial_patch_size": c.PatchSize,
			"temporal_patch_size": c.TemporalPatchSize, "spatial_merge_size": c.MergeSize, "hidden_act": c.HiddenAct,
		}
		cfg := map[string]any{
			"architectures": []string{"Qwen2VLForConditionalGeneration"}, "model_type": c.ModelType, "torch_dtype": torchDType,
			"hidden_size": c.OutHidden, "vision_config": vision,
		}
		return cfg, Processor(c, "Qwen2VLProcessor"), nil
	},
}

func init() { model.Register(Family) }

// Processor is the preprocessor_config.json of the Qwen2-VL and Qwen2.5-VL hub repos
// (patch size from c, CLIP mean and std, 3136..12845056 pixels), naming processor.
func Processor(c model.Config, processor string) map[string]any {
	return map[string]any{
		"min_pixels": 3136, "max_pixels": 12845056, "patch_size": c.PatchSize,
		"temporal_patch_size": c.TemporalPatchSize, "merge_size": c.MergeSize,
		"image_mean": []float64{0.48145466, 0.4578275, 0.40821073}, "image_std": []float64{0.26862954, 0.26130258, 0.27577711},
		"processor_class": processor, "image_processor_type": "Qwen2VLImageProcessor",
	}
}
