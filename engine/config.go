package engine

// config.go reads config.json and preprocessor_config.json (spec sections 1 and 3).
//
// Invariant: a Config that loadConfig returns is internally consistent (head_dim even and
// whole, deepstack taps inside the tower), so the graph never re-checks dims.
// The mutation that would silently break it: defaulting a missing depth or hidden_size to
// the HF class default (27/1152) — a broken file would then run as the wrong model.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/internal/fsx"
)

// Config is what the engine needs of config.json.
type Config struct {
	ModelType            string // qwen3_vl, qwen3_vl_moe, qwen3_5, qwen3_5_moe, qwen2_vl (family.go)
	Depth                int
	Hidden               int // D
	Heads                int // H
	Intermediate         int // I
	OutHidden            int // O
	InChannels           int
	PatchSize            int
	TemporalPatchSize    int
	MergeSize            int
	NumPositionEmbedding int // N*N; 0: no learned position table (Qwen2-VL)
	Deepstack            []int
	HiddenAct            string
	RopeTheta            float64
	WindowSize           int   // Qwen2.5-VL: window_size in pixels; 0: no window attention
	FullAttBlocks        []int // Qwen2.5-VL: the blocks that attend within whole frames
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

// HasDeepstack says whether the model type keeps deepstack mergers: Qwen3.5 deletes them, and
// Qwen2-VL never had them.
func (c Config) HasDeepstack() bool {
	return (c.ModelType == "qwen3_vl" || c.ModelType == "qwen3_vl_moe") && len(c.Deepstack) > 0
}

type visionJSON struct {
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
	VisionConfig *visionJSON `json:"vision_config"`
}

// maxConfigBytes bounds config.json and preprocessor_config.json (real ones are a few KB).
const maxConfigBytes = 16 << 20

// unmarshalObject decodes a JSON file that must hold one object (a config, a preprocessor
// config, a shard index), saying what it holds instead: a byte-order mark (JSON has none,
// and transformers refuses the file too), null, an array, a number, nothing.
func unmarshalObject(data []byte, path string, v any) error {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return fmt.Errorf("%s: starts with a UTF-8 byte-order mark, which JSON does not allow (transformers refuses the file too): save it without one", path)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return fmt.Errorf("%s: empty, want a JSON object", path)
	}
	if trimmed[0] != '{' {
		what := map[byte]string{'n': "null", '[': "an array", '"': "a string", 't': "true", 'f': "false"}[trimmed[0]]
		if what == "" {
			what = fmt.Sprintf("%.20q", trimmed)
		}
		return fmt.Errorf("%s: holds %s, want a JSON object", path, what)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	return nil
}

// loadConfig reads and checks path (a config.json).
func loadConfig(path string) (Config, error) {
	data, err := fsx.ReadSmall(path, maxConfigBytes)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(data, path)
}

// ParseConfig parses config.json bytes; path names the file in messages.
func ParseConfig(data []byte, path string) (Config, error) {
	var cj configJSON
	if err := unmarshalObject(data, path, &cj); err != nil {
		return Config{}, err
	}
	fam := familyOf(cj.ModelType)
	if fam == nil {
		return Config{}, fmt.Errorf("%s: model_type %q is not one of %s", path, cj.ModelType, supportedModelTypes())
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
	c.InChannels = intOr(v.InChannels, 3)
	c.TemporalPatchSize = intOr(v.TemporalPatchSize, 2)
	c.MergeSize = intOr(v.SpatialMergeSize, 2)
	c.HiddenAct = fam.mlpAct
	if v.HiddenAct != nil {
		c.HiddenAct = *v.HiddenAct
	}
	if err := fam.vision(v, &c); err != nil { // widths, patch, position table, deepstack
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

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
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
// (ViT-22B, InternViT-6B), and every block is 12 tensors the checkpoint must list and
// OpenCheckpoint names before it looks one up — at depth 2^20 that list alone was 12.6M
// specs, gigabytes before the first lookup found the checkpoint short.
const MaxDepth = 4096

// Validate checks the consistency the graph relies on.
func (c Config) Validate() error {
	if c.Depth > MaxDepth {
		return fmt.Errorf("vision_config.depth = %d is out of range (1 to %d: each block is 12 tensors the checkpoint must hold, the deepest released towers have 48)", c.Depth, MaxDepth)
	}
	fam := familyOf(c.ModelType)
	if fam == nil {
		return fmt.Errorf("model_type %q is not one of %s", c.ModelType, supportedModelTypes())
	}
	pos := map[string]int{"depth": c.Depth, "hidden_size": c.Hidden, "num_heads": c.Heads,
		"intermediate_size": c.Intermediate, "out_hidden_size": c.OutHidden, "in_channels": c.InChannels,
		"patch_size": c.PatchSize, "temporal_patch_size": c.TemporalPatchSize,
		"spatial_merge_size": c.MergeSize, "num_position_embeddings": c.NumPositionEmbedding}
	keys := []string{"depth", "hidden_size", "num_heads", "intermediate_size", "out_hidden_size", "in_channels",
		"patch_size", "temporal_patch_size", "spatial_merge_size", "num_position_embeddings"}
	if fam != qwen3VL && c.NumPositionEmbedding != 0 {
		return fmt.Errorf("%s has no position table, yet num_position_embeddings is %d", fam.name, c.NumPositionEmbedding)
	}
	if fam == qwen25VL {
		keys = keys[:len(keys)-1] // no position table
	}
	if fam == qwen2VL { // its names for the widths; and it has no position table
		pos = map[string]int{"depth": c.Depth, "embed_dim": c.Hidden, "num_heads": c.Heads,
			"embed_dim * mlp_ratio": c.Intermediate, "hidden_size": c.OutHidden, "in_channels": c.InChannels,
			"patch_size": c.PatchSize, "temporal_patch_size": c.TemporalPatchSize, "spatial_merge_size": c.MergeSize}
		keys = []string{"depth", "embed_dim", "num_heads", "embed_dim * mlp_ratio", "hidden_size", "in_channels",
			"patch_size", "temporal_patch_size", "spatial_merge_size"}
	}
	for _, k := range keys {
		if pos[k] <= 0 || pos[k] > 1<<20 {
			return fmt.Errorf("vision_config.%s = %d is out of range", k, pos[k])
		}
	}
	if fam == qwen25VL {
		if c.WindowSize <= 0 || c.WindowUnits() < 1 {
			return fmt.Errorf("vision_config.window_size %d is smaller than one merge unit (%d px)", c.WindowSize, c.MergeSize*c.PatchSize)
		}
		for i, b := range c.FullAttBlocks {
			if b < 0 || b >= c.Depth || (i > 0 && b <= c.FullAttBlocks[i-1]) {
				return fmt.Errorf("vision_config.fullatt_block_indexes %v: want increasing blocks of 0..%d", c.FullAttBlocks, c.Depth-1)
			}
		}
	}
	if c.Hidden%c.Heads != 0 {
		return fmt.Errorf("vision_config.hidden_size %d is not divisible by num_heads %d", c.Hidden, c.Heads)
	}
	if hd := c.HeadDim(); hd%4 != 0 {
		return fmt.Errorf("head_dim %d (hidden_size %d / num_heads %d) must be a multiple of 4 for the 2D rope (two axes, halves)", hd, c.Hidden, c.Heads)
	}
	if n := c.PosGrid(); n*n != c.NumPositionEmbedding {
		return fmt.Errorf("vision_config.num_position_embeddings %d is not a square", c.NumPositionEmbedding)
	}
	if c.HiddenAct != fam.mlpAct {
		return fmt.Errorf("vision_config.hidden_act %q is not supported (%s's block MLP is %s)", c.HiddenAct, fam.name, fam.mlpAct)
	}
	for i, d := range c.Deepstack {
		if d < 0 || d >= c.Depth {
			return fmt.Errorf("vision_config.deepstack_visual_indexes[%d] = %d is outside the %d blocks", i, d, c.Depth)
		}
		if i > 0 && d <= c.Deepstack[i-1] {
			return fmt.Errorf("vision_config.deepstack_visual_indexes %v must increase", c.Deepstack)
		}
	}
	return nil
}

type preprocessorJSON struct {
	Size *struct {
		Shortest *int `json:"shortest_edge"`
		Longest  *int `json:"longest_edge"`
	} `json:"size"`
	MinPixels         *int      `json:"min_pixels"`
	MaxPixels         *int      `json:"max_pixels"`
	PatchSize         *int      `json:"patch_size"`
	TemporalPatchSize *int      `json:"temporal_patch_size"`
	MergeSize         *int      `json:"merge_size"`
	Mean              []float64 `json:"image_mean"`
	Std               []float64 `json:"image_std"`
	RescaleFactor     *float64  `json:"rescale_factor"`
}

// hfClassDefaults is Qwen2VLImageProcessor's own defaults, used when preprocessor_config.json
// is absent (spec section 3: Qwen2-VL values, patch 14 and CLIP mean/std).
func hfClassDefaults() imageproc.Config {
	return imageproc.Config{MinPixels: 3136, MaxPixels: 1003520, PatchSize: 14, TemporalPatchSize: 2, MergeSize: 2,
		Mean:          [3]float64{0.48145466, 0.4578275, 0.40821073},
		Std:           [3]float64{0.26862954, 0.26130258, 0.27577711},
		RescaleFactor: 1.0 / 255}
}

// loadPreprocessorConfig reads preprocessor_config.json; a missing file gives the class defaults.
func loadPreprocessorConfig(path string) (imageproc.Config, bool, error) {
	data, err := fsx.ReadSmall(path, maxConfigBytes)
	if os.IsNotExist(err) {
		return hfClassDefaults(), false, nil
	}
	if err != nil {
		return imageproc.Config{}, false, err
	}
	c, err := ParsePreprocessorConfig(data, path)
	return c, true, err
}

// ParsePreprocessorConfig overlays the file's fields on the class defaults.
func ParsePreprocessorConfig(data []byte, path string) (imageproc.Config, error) {
	var pj preprocessorJSON
	if err := unmarshalObject(data, path, &pj); err != nil {
		return imageproc.Config{}, err
	}
	c := hfClassDefaults()
	if pj.Size != nil {
		if pj.Size.Shortest == nil || pj.Size.Longest == nil { // transformers raises here too
			return c, fmt.Errorf("%s: size must contain 'shortest_edge' and 'longest_edge'", path)
		}
		c.MinPixels, c.MaxPixels = *pj.Size.Shortest, *pj.Size.Longest
	}
	c.MinPixels = intOr(pj.MinPixels, c.MinPixels) // legacy keys, still honoured by HF
	c.MaxPixels = intOr(pj.MaxPixels, c.MaxPixels)
	c.PatchSize = intOr(pj.PatchSize, c.PatchSize)
	c.TemporalPatchSize = intOr(pj.TemporalPatchSize, c.TemporalPatchSize)
	c.MergeSize = intOr(pj.MergeSize, c.MergeSize)
	if pj.RescaleFactor != nil {
		c.RescaleFactor = *pj.RescaleFactor
	}
	for _, f := range []struct {
		name string
		src  []float64
		dst  *[3]float64
	}{{"image_mean", pj.Mean, &c.Mean}, {"image_std", pj.Std, &c.Std}} {
		if f.src == nil {
			continue
		}
		if len(f.src) != 3 {
			return c, fmt.Errorf("%s: %s must have 3 values, got %d", path, f.name, len(f.src))
		}
		copy(f.dst[:], f.src)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}
