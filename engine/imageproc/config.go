// Package imageproc turns image files into Qwen3-VL / Qwen3.5 vision-tower
// input, reproducing HF transformers' Qwen2VLImageProcessorPil bit for bit:
// load (EXIF orientation, RGB without alpha compositing), smart_resize,
// Pillow bicubic resize, rescale/normalize, temporal duplication, patchify.
//
// This file keeps one invariant: QwenConfig returns exactly the hub
// preprocessor_config.json values of Qwen3-VL / Qwen3.5 (spec §3).
// Mutation that would silently break it: PatchSize 14 (the Qwen2-VL class
// default) would still run but give 1176-wide rows and a 28-pixel grid.
package imageproc

// Config is the meaning of preprocessor_config.json. When the json is absent
// HF falls back to the Qwen2-VL class defaults (patch 14, CLIP mean/std,
// size {3136, 1003520}); that loader lives elsewhere and fills this struct.
type Config struct {
	MinPixels, MaxPixels                    int // size.shortest_edge / size.longest_edge
	PatchSize, TemporalPatchSize, MergeSize int
	Mean, Std                               [3]float64
	RescaleFactor                           float64 // 1/255
}

// QwenConfig is the Qwen3-VL / Qwen3.5 hub preprocessor_config.json.
func QwenConfig() Config {
	return Config{
		MinPixels:         65536,
		MaxPixels:         16777216,
		PatchSize:         16,
		TemporalPatchSize: 2,
		MergeSize:         2,
		Mean:              [3]float64{0.5, 0.5, 0.5},
		Std:               [3]float64{0.5, 0.5, 0.5},
		RescaleFactor:     1.0 / 255.0,
	}
}
