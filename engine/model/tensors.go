package model

// tensors.go names the vision tensors and their shapes (spec section 2), through the family.
//
// Invariant: ExpectedTensors lists every tensor the graph reads, with the shape the graph
// assumes, so a checkpoint that passes the check cannot make an op read out of bounds.
// The mutation that would silently break it: listing qkv as [D, 3D] — the bytes agree, the
// [out, in] layout does not, and every q, k, v would be a scramble.

import "fmt"

// TensorSpec is a name (without the model.visual. prefix), its expected shape, and its role:
// the index of its weight in the list's destination (Role* for a block, a merger's six for a
// merger, the list's own order for the embedding).
type TensorSpec struct {
	Name  string
	Shape []int
	Role  int
}

// Names of the embedding's weights; the bias and the position table only where the family
// has them (HasPatchBias, HasPosEmbed).
const (
	PatchWeightName = "patch_embed.proj.weight"
	PatchBiasName   = "patch_embed.proj.bias"
	PosEmbedName    = "pos_embed.weight"
)

// BlockTensors lists block i's weights, those its family has, in role order.
func (c Config) BlockTensors(i int) []TensorSpec {
	D, I := c.Hidden, c.Intermediate
	shapes := [Roles][]int{{D}, {D}, {3 * D, D}, {3 * D}, {D, D}, {D}, {D}, {D}, {I, D}, {I}, {D, I}, {D}, {I, D}, {I}}
	var out []TensorSpec
	names := c.family().Block
	for k, s := range shapes {
		if names[k] != "" {
			out = append(out, TensorSpec{fmt.Sprintf("blocks.%d.%s", i, names[k]), s, k})
		}
	}
	return out
}

// mergerTensors lists one merger's weights; the final merger's norm is over D, a deepstack
// merger's over M = 4D (post-shuffle).
func (c Config) mergerTensors(prefix string, normDim int) []TensorSpec {
	M, O := c.MergedDim(), c.OutHidden
	n := c.family().Merger
	shapes := [6][]int{{normDim}, {normDim}, {M, M}, {M}, {O, M}, {O}}
	var out []TensorSpec
	for k, s := range shapes {
		if n[k] != "" {
			out = append(out, TensorSpec{prefix + n[k], s, k})
		}
	}
	return out
}

// GlobalTensors lists everything outside the blocks: the patch embedding (and position table),
// the merger and the deepstack mergers.
func (c Config) GlobalTensors() []TensorSpec {
	out := c.EmbedTensors()
	for _, prefix := range c.MergerPrefixes() {
		out = append(out, c.MergerTensors(prefix)...)
	}
	return out
}

// EmbedTensors lists the patch embedding, its bias and the position table, those the family has.
func (c Config) EmbedTensors() []TensorSpec {
	D := c.Hidden
	out := []TensorSpec{{PatchWeightName, []int{D, c.InChannels, c.TemporalPatchSize, c.PatchSize, c.PatchSize}, 0}}
	if c.HasPatchBias() {
		out = append(out, TensorSpec{PatchBiasName, []int{D}, len(out)})
	}
	if c.HasPosEmbed() {
		out = append(out, TensorSpec{PosEmbedName, []int{c.NumPositionEmbedding, D}, len(out)})
	}
	return out
}

// MergerPrefixes names the final merger and the deepstack mergers, in that order.
func (c Config) MergerPrefixes() []string {
	out := []string{"merger."}
	for k := range c.Deepstack {
		out = append(out, DeepstackPrefix(k))
	}
	return out
}

// DeepstackPrefix names deepstack merger k's tensors.
func DeepstackPrefix(k int) string { return fmt.Sprintf("deepstack_merger_list.%d.", k) }

// MergerTensors lists the weights of the merger named by prefix (MergerPrefixes).
func (c Config) MergerTensors(prefix string) []TensorSpec {
	if prefix == "merger." {
		return c.mergerTensors(prefix, c.Hidden)
	}
	return c.mergerTensors(prefix, c.MergedDim())
}

// ExpectedTensors is every vision tensor: the embedding's (1 to 3), each block's (10 to 14),
// each merger's (5 or 6).
func (c Config) ExpectedTensors() []TensorSpec {
	out := c.GlobalTensors()
	for i := 0; i < c.Depth; i++ {
		out = append(out, c.BlockTensors(i)...)
	}
	return out
}
