package engine

// family.go: what differs between the model families whose vision towers the engine runs,
// kept in one table: how config.json describes the tower, what its tensors are called, and
// the few places its block and embedding differ (the patch embedding's bias, the learned
// position table, the block MLP's activation). Everything else (the graph, residency, probes,
// memory, bench) reads the Config, which reads its family here.
//
// Invariant: a family's tensor names are listed in the graph's role order (blockTensorSuffixes'
// order for a block, MergerWeights' for a merger), so a slot index means the same role in
// every family.
// Mutation that would silently break it: listing Qwen2-VL's fc1 and fc2 in the other order —
// every shape check would still pass for a square MLP, and the tower would run fc2 first
// (TestParityQwen2VL: its MLP is not square, but the bits would be wrong even where it were).
//
// This is the first step of the room issue 21 asks for (engine/model, a family per folder):
// the facts are already in one place; moving them behind an interface is the next.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
)

// family is one model family's facts.
type family struct {
	name       string   // for people: "Qwen3-VL"
	modelTypes []string // config.json's model_type values it covers
	// block lists a block's twelve tensor suffixes in blockTensorSuffixes' role order.
	block [blockWeightCount]string
	// merger lists the final merger's six tensor suffixes (norm w, b; fc1 w, b; fc2 w, b).
	merger    [6]string
	patchBias bool             // the patch embedding (Conv3d) has a bias
	rmsNorm   bool             // RMS norms (weight only), not LayerNorms
	gated     bool             // the MLP is down(act(gate(x)) * up(x))
	mlpAct    string           // vision_config.hidden_act it runs
	mlpForm   backend.GELUForm // and the epilogue form that computes it
	// vision reads config.json's vision_config into c (what the shared fields do not say).
	vision func(v *visionJSON, c *Config) error
	// arrange orders a page's rows and sets its blocks' attention segments (nil: the
	// processor's order, every block attending within whole frames).
	arrange func(c Config, lay *geom.Layout) error
}

var families = []*family{qwen3VL, qwen2VL, qwen25VL}

// qwen3VL: Qwen3-VL, Qwen3-VL-MoE, Qwen3.5, Qwen3.5-MoE (spec: qwen3-vl-vision.md).
var qwen3VL = &family{
	name:       "Qwen3-VL / Qwen3.5",
	modelTypes: []string{"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"},
	block: [blockWeightCount]string{"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "norm2.bias", "mlp.linear_fc1.weight", "mlp.linear_fc1.bias", "mlp.linear_fc2.weight", "mlp.linear_fc2.bias", "", ""},
	merger:    [6]string{"norm.weight", "norm.bias", "linear_fc1.weight", "linear_fc1.bias", "linear_fc2.weight", "linear_fc2.bias"},
	patchBias: true,
	mlpAct:    "gelu_pytorch_tanh",
	mlpForm:   backend.GELUTanh,
	vision: func(v *visionJSON, c *Config) error {
		for _, f := range []struct {
			name string
			src  *int
			dst  *int
		}{{"hidden_size", v.HiddenSize, &c.Hidden}, {"intermediate_size", v.IntermediateSize, &c.Intermediate},
			{"out_hidden_size", v.OutHiddenSize, &c.OutHidden}} {
			if f.src == nil {
				return fmt.Errorf("vision_config is missing %q", f.name)
			}
			*f.dst = *f.src
		}
		c.PatchSize = intOr(v.PatchSize, 16)
		c.NumPositionEmbedding = intOr(v.NumPositionEmbeddings, 2304)
		c.Deepstack = v.DeepstackIndexes
		if v.DeepstackIndexes == nil && (c.ModelType == "qwen3_vl" || c.ModelType == "qwen3_vl_moe") {
			c.Deepstack = []int{8, 16, 24}
		}
		return nil
	},
}

// qwen2VL: Qwen2-VL. The block is Qwen3-VL's with fc1/fc2 named so, quick_gelu in the MLP, no
// bias on the patch embedding and no learned position table (the 2D rope alone); embed_dim is
// the block width, hidden_size the merger's output, the MLP embed_dim*mlp_ratio wide; the
// merger's norm is ln_q (a LayerNorm) and its MLP mlp.0 / mlp.2 with the exact GELU.
var qwen2VL = &family{
	name:       "Qwen2-VL",
	modelTypes: []string{"qwen2_vl"},
	block: [blockWeightCount]string{"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "norm2.bias", "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias", "", ""},
	merger:  [6]string{"ln_q.weight", "ln_q.bias", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"},
	mlpAct:  "quick_gelu",
	mlpForm: backend.GELUQuick,
	vision: func(v *visionJSON, c *Config) error {
		if v.EmbedDim == nil {
			return fmt.Errorf("vision_config is missing %q", "embed_dim")
		}
		if v.HiddenSize == nil {
			return fmt.Errorf("vision_config is missing %q (the merger's output width)", "hidden_size")
		}
		c.Hidden, c.OutHidden = *v.EmbedDim, *v.HiddenSize
		ratio := 4.0 // Qwen2VLVisionConfig's default
		if v.MLPRatio != nil {
			ratio = *v.MLPRatio
		}
		if !(ratio > 0 && ratio <= 1024) {
			return fmt.Errorf("vision_config.mlp_ratio %v is out of range", ratio)
		}
		c.Intermediate = int(float64(c.Hidden) * ratio) // int(embed_dim * mlp_ratio), as transformers
		c.PatchSize = intOr(v.PatchSize, 14)
		return nil
	},
}

// qwen25VL: Qwen2.5-VL. RMS norms (eps 1e-6, weight only) in the blocks and the merger's ln_q;
// a gated MLP down(silu(gate(x)) * up(x)) with biases; no position table, no patch bias; patches
// of 14; window attention in every block but fullatt_block_indexes: the rows regrouped by
// windows of window_size/merge/patch merge units a side (geom.Layout.UseWindowOrder), the
// merger's rows handed back in the processor's order.
var qwen25VL = &family{
	name:       "Qwen2.5-VL",
	modelTypes: []string{"qwen2_5_vl"},
	block: [blockWeightCount]string{"norm1.weight", "", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "", "mlp.gate_proj.weight", "mlp.gate_proj.bias", "mlp.down_proj.weight", "mlp.down_proj.bias",
		"mlp.up_proj.weight", "mlp.up_proj.bias"},
	merger:  [6]string{"ln_q.weight", "", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"},
	rmsNorm: true,
	gated:   true,
	mlpAct:  "silu",
	mlpForm: backend.GELUSiLU,
	vision: func(v *visionJSON, c *Config) error {
		for _, f := range []struct {
			name string
			src  *int
			dst  *int
		}{{"hidden_size", v.HiddenSize, &c.Hidden}, {"intermediate_size", v.IntermediateSize, &c.Intermediate},
			{"out_hidden_size", v.OutHiddenSize, &c.OutHidden}} {
			if f.src == nil {
				return fmt.Errorf("vision_config is missing %q", f.name)
			}
			*f.dst = *f.src
		}
		c.PatchSize = intOr(v.PatchSize, 14)
		c.WindowSize = intOr(v.WindowSize, 112)
		c.FullAttBlocks = v.FullAttBlockIndexes
		if v.FullAttBlockIndexes == nil {
			c.FullAttBlocks = []int{7, 15, 23, 31} // Qwen2_5_VLVisionConfig's default
		}
		return nil
	},
	arrange: func(c Config, lay *geom.Layout) error {
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
}

// WindowUnits is a window's side in merge units (Qwen2.5-VL: window_size // merge // patch,
// integer divisions as transformers does them); 0 without window attention.
func (c Config) WindowUnits() int {
	if c.WindowSize == 0 {
		return 0
	}
	return c.WindowSize / c.MergeSize / c.PatchSize
}

// arrange orders lay's rows and sets its blocks' segments as the family does.
func (c Config) arrange(lay *geom.Layout) error {
	if f := c.family(); f.arrange != nil {
		return f.arrange(c, lay)
	}
	return nil
}

// familyOf is the family of a config.json model_type, or nil.
func familyOf(modelType string) *family {
	for _, f := range families {
		if slices.Contains(f.modelTypes, modelType) {
			return f
		}
	}
	return nil
}

// supportedModelTypes lists every model_type the engine opens, for messages.
func supportedModelTypes() string {
	var all []string
	for _, f := range families {
		all = append(all, f.modelTypes...)
	}
	return strings.Join(all, ", ")
}

// SupportedFamilies names every family the engine runs, with its model_type values, for
// people: "Qwen3-VL / Qwen3.5 (qwen3_vl, ...), Qwen2-VL (qwen2_vl), ...".
func SupportedFamilies() string {
	var parts []string
	for _, f := range families {
		parts = append(parts, fmt.Sprintf("%s (%s)", f.name, strings.Join(f.modelTypes, ", ")))
	}
	return strings.Join(parts, ", ")
}

// Family names the config's model family for people ("Qwen3-VL / Qwen3.5", "Qwen2-VL").
func (c Config) Family() string { return c.family().name }

func (c Config) family() *family {
	if f := familyOf(c.ModelType); f != nil {
		return f
	}
	panic(fmt.Sprintf("engine: model_type %q has no family (configs are checked when read)", c.ModelType))
}

// HasPosEmbed says whether the tower adds a learned position table (Qwen3-VL) to the patch
// embedding; without one (Qwen2-VL) the 2D rope is its only position signal.
func (c Config) HasPosEmbed() bool { return c.NumPositionEmbedding > 0 }

// HasPatchBias says whether the patch embedding has a bias.
func (c Config) HasPatchBias() bool { return c.family().patchBias }

// MLPForm is the block MLP's activation as the matmul epilogue's form.
func (c Config) MLPForm() backend.GELUForm { return c.family().mlpForm }

// Gated says whether the block MLP is gated: down(act(gate(x)) * up(x)) (Qwen2.5-VL), not
// fc2(act(fc1(x))).
func (c Config) Gated() bool { return c.family().gated }

// RMSNorms says whether the norms are RMS norms (weight only) rather than LayerNorms.
func (c Config) RMSNorms() bool { return c.family().rmsNorm }

// MLPFLOPs is one block MLP's multiply-adds times two over S rows: two products of D x I, a
// third for a gated MLP's up projection.
func (c Config) MLPFLOPs(S int) float64 {
	n := 4.0
	if c.Gated() {
		n = 6
	}
	return n * float64(S) * float64(c.Hidden) * float64(c.Intermediate)
}
