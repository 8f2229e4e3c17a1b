package model

// config.go reads config.json (spec section 1) into a Config, through the config's family.
//
// Invariant: a Config that ParseConfig returns is internally consistent (head_dim even and
// whole, deepstack taps inside the tower, windows at least one merge unit), so the graph never
// re-checks dims.
// The mutation that would silently break it: defaulting a missing depth or hidden_size to
// the HF class default (27/1152) — a broken file would then run as the wrong model.

import (
	"encoding/json"
	"fmt"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/internal/jsonobj"
)

// Config is what the engine needs of config.json.
type Config struct {
	ModelType            string // one of a registered family's (ModelTypes)
	Depth                int
	Hidden               int // D
	Heads                int // H
	Intermediate         int // I
	OutHidden            int // O
	InChannels           int
	PatchSize            int
	TemporalPatchSize    int
	MergeSize            int
	NumPositionEmbedding int // N*N; 0: no learned position table
	Deepstack            []int
	HiddenAct            string
	RopeTheta            float64
	WindowSize           int   // window_size in pixels (Qwen2.5-VL); 0: no window attention
	FullAttBlocks        []int // the blocks that attend within whole frames when others use windows
}

// HeadDim is D/H.
func (c Config) HeadDim() int { return c.Hidden / c.Heads }

// PatchDim is C*Tp*P*P, the width of a pixel_values row.
func (c Config) PatchDim() int {
	return c.InChannels * c.TemporalPatchSize * c.PatchSize * c.PatchSize
}

// MergedDim is D*m*m, the merger input width.
func (c Config) MergedDim() int { return c.Hidden * c.MergeSize * c.MergeSize }

// PosGrid is N, the side of the learned position table.
func (c Config) PosGrid() int {
	n := 0
	for (n+1)*(n+1) <= c.NumPositionEmbedding {
		n++
	}
	return n
}

// HasDeepstack says whether the model type keeps deepstack mergers (Qwen3-VL's; Qwen3.5
// deletes them, the others never had them).
func (c Config) HasDeepstack() bool {
	f := Lookup(c.ModelType)
	return f != nil && f.Deepstack != nil && f.Deepstack(c.ModelType) && len(c.Deepstack) > 0
}

// Family names the config's model family for people ("Qwen3-VL / Qwen3.5", "Qwen2-VL").
func (c Config) Family() string { return c.family().Name }

func (c Config) family() *Family {
	if f := Lookup(c.ModelType); f != nil {
		return f
	}
	panic(fmt.Sprintf("model: model_type %q has no family (configs are checked when read)", c.ModelType))
}

// HasPosEmbed says whether the tower adds a learned position table to the patch embedding;
// without one the 2D rope is its only position signal.
func (c Config) HasPosEmbed() bool { return c.NumPositionEmbedding > 0 }

// HasPatchBias says whether the patch embedding has a bias.
func (c Config) HasPatchBias() bool { return c.family().PatchBias }

// RMSNorms says whether the norms are RMS norms (weight only) rather than LayerNorms.
func (c Config) RMSNorms() bool { return c.family().RMSNorm }

// Gated says whether the block MLP is gated: down(act(gate(x)) * up(x)), not fc2(act(fc1(x))).
func (c Config) Gated() bool { return c.family().Gated }

// MLPForm is the block MLP's activation as the matmul epilogue's form.
func (c Config) MLPForm() backend.GELUForm { return c.family().MLPForm }

// MLPFLOPs is one block MLP's multiply-adds times two over S rows: two products of D x I, a
// third for a gated MLP's up projection.
func (c Config) MLPFLOPs(S int) float64 {
	n := 4.0
	if c.Gated() {
		n = 6
	}
	return n * float64(S) * float64(c.Hidden) * float64(c.Intermediate)
}

// TileBytes is the MLP tile buffers of a page of patches at tile rows: the graph's tile holds
// min(tile, patches) rows of the MLP's hidden layer, float32 (a gated MLP a second tile, its
// up projection's).
func (c Config) TileBytes(tile, patches int) int64 {
	n := int64(min(tile, patches)) * int64(c.Intermediate) * 4
	if c.Gated() {
		return 2 * n
	}
	return n
}

// WindowUnits is a window's side in merge units (window_size // merge // patch, integer
// divisions as transformers does them); 0 without window attention.
func (c Config) WindowUnits() int {
	if c.WindowSize == 0 {
		return 0
	}
	return c.WindowSize / c.MergeSize / c.PatchSize
}

// ArrangesRows says whether the family puts a page's rows in another order than the
// processor's (and so gathers a copy of the pixels): Qwen2.5-VL's windows.
func (c Config) ArrangesRows() bool { return c.family().Arrange != nil }

// Arrange orders lay's rows and sets its blocks' attention segments as the family does.
func (c Config) Arrange(lay *geom.Layout) error {
	if f := c.family(); f.Arrange != nil {
		return f.Arrange(c, lay)
	}
	return nil
}

// VisionJSON is config.json's vision_config, every family's keys.
type VisionJSON struct {
	Depth                 *int            `json:"depth"`
	HiddenSize            *int            `json:"hidden_size"` // Qwen2-VL: the merger's output
	EmbedDim              *int            `json:"embed_dim"`   // Qwen2-VL's block width
	MLPRatio              *float64        `json:"mlp_ratio"`   // Qwen2-VL's MLP width / embed_dim
	WindowSize            *int            `json:"window_size"`
	FullAttBlockIndexes   []int           `json:"fullatt_block_indexes"`
	NumHeads              *int            `json:"num_heads"`
	IntermediateSize      *int            `json:"intermediate_size"`
	OutHiddenSize         *int            `json:"out_hidden_size"`
	InChannels            *int            `json:"in_channels"`
	PatchSize             *int            `json:"patch_size"`
	TemporalPatchSize     *int            `json:"temporal_patch_size"`
	SpatialMergeSize      *int            `json:"spatial_merge_size"`
	NumPositionEmbeddings *int            `json:"num_position_embeddings"`
	DeepstackIndexes      []int           `json:"deepstack_visual_indexes"`
	HiddenAct             *string         `json:"hidden_act"`
	RopeParameters        json.RawMessage `json:"rope_parameters"`
}

type configJSON struct {
	ModelType    string      `json:"model_type"`
	VisionConfig *VisionJSON `json:"vision_config"`
}

// ParseConfig parses config.json bytes; path names the file in messages.
func ParseConfig(data []byte, path string) (Config, error) {
	var cj configJSON
	if err := jsonobj.Unmarshal(data, path, &cj); err != nil {
		return Config{}, err
	}
	fam := Lookup(cj.ModelType)
	if fam == nil {
		return Config{}, fmt.Errorf("%s: model_type %q is not one of %s", path, cj.ModelType, ModelTypes())
	}
	v := cj.VisionConfig
	if v == nil {
		return Config{}, fmt.Errorf("%s: missing vision_config", path)
	}
	c := Config{ModelType: cj.ModelType}
	for _, f := range []struct {
		name string
		src  *int
		dst  *int
	}{{"depth", v.Depth, &c.Depth}, {"num_heads", v.NumHeads, &c.Heads}} {
		if f.src == nil {
			return Config{}, fmt.Errorf("%s: vision_config is missing %q", path, f.name)
		}
		*f.dst = *f.src
	}
	// Fields every released file carries but HF defaults sanely (spec section 1).
	c.InChannels = IntOr(v.InChannels, 3)
	c.TemporalPatchSize = IntOr(v.TemporalPatchSize, 2)
	c.MergeSize = IntOr(v.SpatialMergeSize, 2)
	c.HiddenAct = fam.MLPAct
	if v.HiddenAct != nil {
		c.HiddenAct = *v.HiddenAct
	}
	if err := fam.Vision(v, &c); err != nil { // widths, patch, position table, deepstack, windows
		return Config{}, fmt.Errorf("%s: %v", path, err)
	}
	if !c.HasDeepstack() {
		c.Deepstack = nil
	}
	theta, err := ropeTheta(v.RopeParameters)
	if err != nil {
		return Config{}, fmt.Errorf("%s: vision_config.rope_parameters: %v", path, err)
	}
	c.RopeTheta = theta
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}

// IntOr is *p, or def when p is nil (a key the file leaves out).
func IntOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// Required copies each named value into its destination, or says which is missing.
func Required(fields ...Field) error {
	for _, f := range fields {
		if f.Src == nil {
			return fmt.Errorf("vision_config is missing %q", f.Name)
		}
		*f.Dst = *f.Src
	}
	return nil
}

// Field is one required integer of vision_config: its key, where it was read, where it goes.
type Field struct {
	Name     string
	Src, Dst *int
}

func ropeTheta(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 10000, nil
	}
	var rp struct {
		Theta *float64 `json:"rope_theta"`
	}
	if err := json.Unmarshal(raw, &rp); err != nil {
		return 0, err
	}
	if rp.Theta == nil {
		return 10000, nil
	}
	if *rp.Theta <= 0 {
		return 0, fmt.Errorf("rope_theta %v must be positive", *rp.Theta)
	}
	return *rp.Theta, nil
}

// MaxDepth bounds vision_config.depth: the deepest vision towers released have 48 blocks
// (ViT-22B, InternViT-6B), and every block is up to 14 tensors the checkpoint must list and
// OpenCheckpoint names before it looks one up — at depth 2^20 that list alone was 12.6M
// specs, gigabytes before the first lookup found the checkpoint short.
const MaxDepth = 4096

// Validate checks the consistency the graph relies on.
func (c Config) Validate() error {
	if c.Depth > MaxDepth {
		return fmt.Errorf("vision_config.depth = %d is out of range (1 to %d: each block is up to 14 tensors the checkpoint must hold, the deepest released towers have 48)", c.Depth, MaxDepth)
	}
	fam := Lookup(c.ModelType)
	if fam == nil {
		return fmt.Errorf("model_type %q is not one of %s", c.ModelType, ModelTypes())
	}
	w := fam.WidthNames
	for _, f := range []struct {
		name string
		v    int
	}{{"depth", c.Depth}, {w[0], c.Hidden}, {"num_heads", c.Heads}, {w[1], c.Intermediate}, {w[2], c.OutHidden},
		{"in_channels", c.InChannels}, {"patch_size", c.PatchSize}, {"temporal_patch_size", c.TemporalPatchSize},
		{"spatial_merge_size", c.MergeSize}} {
		if f.v <= 0 || f.v > 1<<20 {
			return fmt.Errorf("vision_config.%s = %d is out of range", f.name, f.v)
		}
	}
	switch {
	case fam.PosTable && (c.NumPositionEmbedding <= 0 || c.NumPositionEmbedding > 1<<20):
		return fmt.Errorf("vision_config.num_position_embeddings = %d is out of range", c.NumPositionEmbedding)
	case !fam.PosTable && c.NumPositionEmbedding != 0:
		return fmt.Errorf("%s has no position table, yet num_position_embeddings is %d", fam.Name, c.NumPositionEmbedding)
	}
	if c.Hidden%c.Heads != 0 {
		return fmt.Errorf("vision_config.%s %d is not divisible by num_heads %d", w[0], c.Hidden, c.Heads)
	}
	if hd := c.HeadDim(); hd%4 != 0 {
		return fmt.Errorf("head_dim %d (%s %d / num_heads %d) must be a multiple of 4 for the 2D rope (two axes, halves)", hd, w[0], c.Hidden, c.Heads)
	}
	if n := c.PosGrid(); n*n != c.NumPositionEmbedding {
		return fmt.Errorf("vision_config.num_position_embeddings %d is not a square", c.NumPositionEmbedding)
	}
	if c.HiddenAct != fam.MLPAct {
		return fmt.Errorf("vision_config.hidden_act %q is not supported (%s's block MLP is %s)", c.HiddenAct, fam.Name, fam.MLPAct)
	}
	for i, d := range c.Deepstack {
		if d < 0 || d >= c.Depth {
			return fmt.Errorf("vision_config.deepstack_visual_indexes[%d] = %d is outside the %d blocks", i, d, c.Depth)
		}
		if i > 0 && d <= c.Deepstack[i-1] {
			return fmt.Errorf("vision_config.deepstack_visual_indexes %v must increase", c.Deepstack)
		}
	}
	if fam.Check != nil {
		return fam.Check(c)
	}
	return nil
}

// AttentionFLOPs is one block's attention half over its segments segs (covering the page's
// rows): qkv 2*S*D*3D, QK^T and PV 4*L^2*D per segment of L rows, proj 2*S*D*D; op is the
// segments' part alone (the attention op). A windowed block's op is the windows', not S^2.
func (c Config) AttentionFLOPs(segs []backend.Segment) (half, op float64) {
	D := float64(c.Hidden)
	var S float64
	for _, s := range segs {
		L := float64(s.End - s.Start)
		S += L
		op += 4 * L * L * D
	}
	return 2*S*D*3*D + op + 2*S*D*D, op
}
