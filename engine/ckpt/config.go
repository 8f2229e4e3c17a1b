package ckpt

// config.go reads config.json (through engine/model, which checks it) and
// preprocessor_config.json (spec sections 1 and 3). The families the engine runs are each a
// folder under engine/model that registers itself there: importing it here is all it takes.
//
// Invariant: a missing preprocessor_config.json gives transformers' class defaults, a present
// one overlays them key by key, and the result is checked before any image is read.
// The mutation that would silently break it: taking the preprocessor's patch size from the
// tower when the file names another — the page would be cut into the wrong patches.

import (
	"fmt"
	"os"

	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/model"
	_ "github.com/turbospark/inspector/engine/model/qwen25vl" // Qwen2.5-VL
	_ "github.com/turbospark/inspector/engine/model/qwen2vl"  // Qwen2-VL
	_ "github.com/turbospark/inspector/engine/model/qwen3vl"  // Qwen3-VL, Qwen3.5
	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/jsonobj"
)

// maxConfigBytes bounds config.json and preprocessor_config.json (real ones are a few KB).
const maxConfigBytes = 16 << 20

// loadConfig reads and checks path (a config.json).
func loadConfig(path string) (model.Config, error) {
	data, err := fsx.ReadSmall(path, maxConfigBytes)
	if err != nil {
		return model.Config{}, err
	}
	return model.ParseConfig(data, path)
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
	if err := jsonobj.Unmarshal(data, path, &pj); err != nil {
		return imageproc.Config{}, err
	}
	c := hfClassDefaults()
	if pj.Size != nil {
		if pj.Size.Shortest == nil || pj.Size.Longest == nil { // transformers raises here too
			return c, fmt.Errorf("%s: size must contain 'shortest_edge' and 'longest_edge'", path)
		}
		c.MinPixels, c.MaxPixels = *pj.Size.Shortest, *pj.Size.Longest
	}
	c.MinPixels = model.IntOr(pj.MinPixels, c.MinPixels) // legacy keys, still honoured by HF
	c.MaxPixels = model.IntOr(pj.MaxPixels, c.MaxPixels)
	c.PatchSize = model.IntOr(pj.PatchSize, c.PatchSize)
	c.TemporalPatchSize = model.IntOr(pj.TemporalPatchSize, c.TemporalPatchSize)
	c.MergeSize = model.IntOr(pj.MergeSize, c.MergeSize)
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
