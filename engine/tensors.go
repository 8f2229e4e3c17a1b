package engine

// tensors.go names the vision tensors and their shapes (spec section 2).
//
// Invariant: ExpectedTensors lists every tensor the graph reads, with the shape the graph
// assumes, so a checkpoint that passes the check cannot make an op read out of bounds.
// The mutation that would silently break it: listing qkv as [D, 3D] — the bytes agree, the
// [out, in] layout does not, and every q, k, v would be a scramble.

import "fmt"

// Names of a block's twelve weights, in the order a slot holds them.
var blockTensorSuffixes = [...]string{
	"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
	"norm2.weight", "norm2.bias", "mlp.linear_fc1.weight", "mlp.linear_fc1.bias", "mlp.linear_fc2.weight", "mlp.linear_fc2.bias",
}

// TensorSpec is a name (without the model.visual. prefix) and its expected shape.
type TensorSpec struct {
	Name  string
	Shape []int
}

// BlockTensors lists block i's twelve weights.
func (c Config) BlockTensors(i int) []TensorSpec {
	D, I := c.Hidden, c.Intermediate
	shapes := [][]int{{D}, {D}, {3 * D, D}, {3 * D}, {D, D}, {D}, {D}, {D}, {I, D}, {I}, {D, I}, {D}}
	out := make([]TensorSpec, len(shapes))
	for k, s := range shapes {
		out[k] = TensorSpec{fmt.Sprintf("blocks.%d.%s", i, blockTensorSuffixes[k]), s}
	}
	return out
}

// mergerTensors lists one merger's six weights; the final merger's norm is over D, a
// deepstack merger's over M = 4D (post-shuffle).
func (c Config) mergerTensors(prefix string, normDim int) []TensorSpec {
	M, O := c.MergedDim(), c.OutHidden
	return []TensorSpec{
		{prefix + "norm.weight", []int{normDim}}, {prefix + "norm.bias", []int{normDim}},
		{prefix + "linear_fc1.weight", []int{M, M}}, {prefix + "linear_fc1.bias", []int{M}},
		{prefix + "linear_fc2.weight", []int{O, M}}, {prefix + "linear_fc2.bias", []int{O}},
	}
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

// EmbedTensors lists the patch and position embeddings.
func (c Config) EmbedTensors() []TensorSpec {
	D := c.Hidden
	return []TensorSpec{
		{"patch_embed.proj.weight", []int{D, c.InChannels, c.TemporalPatchSize, c.PatchSize, c.PatchSize}},
		{"patch_embed.proj.bias", []int{D}},
		{"pos_embed.weight", []int{c.NumPositionEmbedding, D}},
	}
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

// ExpectedTensors is every vision tensor: 3 + 12*depth + 6 + 6*len(deepstack).
func (c Config) ExpectedTensors() []TensorSpec {
	out := c.GlobalTensors()
	for i := 0; i < c.Depth; i++ {
		out = append(out, c.BlockTensors(i)...)
	}
	return out
}
