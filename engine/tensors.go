package engine

// tensors.go: the embedding's weights as the graph takes them (the tensor lists themselves are
// engine/model's, per family).
//
// Invariant: a weight the family has not is the zero Weight (nil Region), which MatMul reads as
// "no bias" and embed as "no table", never a lookup of a name the checkpoint need not hold.
// Mutation that would silently break it: looking up patch_embed.proj.bias for a family without
// it: the mapped residency would index a tensor that is not there.

import (
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/model"
)

// embedWeights are the embedding's weights from res: the bias and the table zero Weights
// (nil Region) where the family has none.
func embedWeights(c Config, res Residency) (patch, bias, pos backend.Weight) {
	patch = res.Global(model.PatchWeightName)
	if c.HasPatchBias() {
		bias = res.Global(model.PatchBiasName)
	}
	if c.HasPosEmbed() {
		pos = res.Global(model.PosEmbedName)
	}
	return patch, bias, pos
}
