package engine

// tensors.go names the vision tensors and their shapes (spec section 2).
//
// Invariant: ExpectedTensors lists every tensor the graph reads, with the shape the graph
// assumes, so a checkpoint that passes the check cannot make an op read out of bounds.
// The mutation that would silently break it: listing qkv as [D, 3D] — the bytes agree, the
// [out, in] layout does not, and every q, k, v would be a scramble.

import (
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
)

// blockTensorSuffixes names a block's weights by role (Qwen3-VL's names; "" for a role it has
// not): the roles every family lists its own names in (family.go).
var blockTensorSuffixes = qwen3VL.block

// TensorSpec is a name (without the model.visual. prefix), its expected shape, and its role:
// the index of its weight in the list's destination (BlockWeights for a block, a merger's six
// for a merger, the list's own order for the embedding).
type TensorSpec struct {
	Name  string
	Shape []int
	Role  int
}

// BlockTensors lists block i's weights, those its family has, in role order.
func (c Config) BlockTensors(i int) []TensorSpec {
	D, I := c.Hidden, c.Intermediate
	shapes := [blockWeightCount][]int{{D}, {D}, {3 * D, D}, {3 * D}, {D, D}, {D}, {D}, {D}, {I, D}, {I}, {D, I}, {D}, {I, D}, {I}}
	var out []TensorSpec
	names := c.family().block
	for k, s := range shapes {
		if names[k] != "" {
			out = append(out, TensorSpec{fmt.Sprintf("blocks.%d.%s", i, names[k]), s, k})
		}
	}
	return out
}

// mergerTensors lists one merger's six weights; the final merger's norm is over D, a
// deepstack merger's over M = 4D (post-shuffle).
func (c Config) mergerTensors(prefix string, normDim int) []TensorSpec {
	M, O := c.MergedDim(), c.OutHidden
	n := c.family().merger
	shapes := [6][]int{{normDim}, {normDim}, {M, M}, {M}, {O, M}, {O}}
	var out []TensorSpec
	for k, s := range shapes {
		if n[k] != "" {
			out = append(out, TensorSpec{prefix + n[k], s, k})
		}
	}
	return out
}

// GlobalTensors lists everything outside the blocks: patch and position embeddings, the
// merger and the deepstack mergers.
func (c Config) GlobalTensors() []TensorSpec {
	out := c.EmbedTensors()
	for _, prefix := range c.MergerPrefixes() {
		out = append(out, c.MergerTensors(prefix)...)
	}
	return out
}

// Names of the embedding's weights; the bias and the position table only where the family
// has them (HasPatchBias, HasPosEmbed).
const (
	patchWeightName = "patch_embed.proj.weight"
	patchBiasName   = "patch_embed.proj.bias"
	posEmbedName    = "pos_embed.weight"
)

// EmbedTensors lists the patch embedding, its bias and the position table, those the family has.
func (c Config) EmbedTensors() []TensorSpec {
	D := c.Hidden
	out := []TensorSpec{{patchWeightName, []int{D, c.InChannels, c.TemporalPatchSize, c.PatchSize, c.PatchSize}, 0}}
	if c.HasPatchBias() {
		out = append(out, TensorSpec{patchBiasName, []int{D}, len(out)})
	}
	if c.HasPosEmbed() {
		out = append(out, TensorSpec{posEmbedName, []int{c.NumPositionEmbedding, D}, len(out)})
	}
	return out
}

// embedWeights are the embedding's weights from res: the bias and the table zero Weights
// (nil Region) where the family has none.
func (c Config) embedWeights(res Residency) (patch, bias, pos backend.Weight) {
	patch = res.Global(patchWeightName)
	if c.HasPatchBias() {
		bias = res.Global(patchBiasName)
	}
	if c.HasPosEmbed() {
		pos = res.Global(posEmbedName)
	}
	return patch, bias, pos
}

// MergerPrefixes names the final merger and the deepstack mergers, in that order.
func (c Config) MergerPrefixes() []string {
	out := []string{"merger."}
	for k := range c.Deepstack {
		out = append(out, fmt.Sprintf("deepstack_merger_list.%d.", k))
	}
	return out
}

// MergerTensors lists the six weights of the merger named by prefix (MergerPrefixes).
func (c Config) MergerTensors(prefix string) []TensorSpec {
	if prefix == "merger." {
		return c.mergerTensors(prefix, c.Hidden)
	}
	return c.mergerTensors(prefix, c.MergedDim())
}

// ExpectedTensors is every vision tensor: the embedding's (1 to 3) + 12*depth + 6 +
// 6*len(deepstack).
func (c Config) ExpectedTensors() []TensorSpec {
	out := c.GlobalTensors()
	for i := 0; i < c.Depth; i++ {
		out = append(out, c.BlockTensors(i)...)
	}
	return out
}
