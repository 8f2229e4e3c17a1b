// Package qwen3vl is the Qwen3-VL family: Qwen3-VL, Qwen3-VL-MoE, Qwen3.5 and Qwen3.5-MoE
// (spec: shared/spec/qwen3-vl-vision.md). LayerNorms (eps 1e-6), an MLP
// linear_fc2(gelu_pytorch_tanh(linear_fc1(x))), a patch embedding with a bias plus a learned
// position table (num_position_embeddings, interpolated bilinearly to the grid), patches of
// 16, whole-frame attention in every block; deepstack mergers after some blocks (Qwen3-VL only:
// Qwen3.5 deletes them), each normalizing after the 2x2 concatenation; the final merger's
// norm before it. Its whole definition is this table; the block is engine/graph.go's.
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
}

// keepsDeepstack: Qwen3-VL keeps its deepstack mergers, Qwen3.5 deletes them.
func keepsDeepstack(modelType string) bool {
	return modelType == "qwen3_vl" || modelType == "qwen3_vl_moe"
}

func init() { model.Register(Family) }
