// Package synth writes random-weight checkpoints in Hugging Face layout (config.json,
// preprocessor_config.json, model.safetensors) for the presets the CLI's gen offers.
//
// Invariant: a written checkpoint opens with engine.OpenCheckpoint and its activations stay
// finite through every block: weights are scaled like HF's initializer (std 0.02), LayerNorm
// gains near 1. The mutation that would silently break it: a weight std of 1 — the residual
// stream then grows by ~sqrt(D) per block and bf16 runs overflow by the last blocks.
package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/safetensors"
)

// Presets maps a preset name to its vision config (spec section 1 for the released ones).
var presets = map[string]engine.Config{
	"tiny": {ModelType: "qwen3_vl", Depth: 4, Hidden: 64, Heads: 4, Intermediate: 128, OutHidden: 96,
		NumPositionEmbedding: 2304, Deepstack: []int{1, 2}},
	"tiny-qwen3.5": {ModelType: "qwen3_5", Depth: 2, Hidden: 144, Heads: 2, Intermediate: 256, OutHidden: 128,
		NumPositionEmbedding: 2304},
	"qwen3-vl-2b": {ModelType: "qwen3_vl", Depth: 24, Hidden: 1024, Heads: 16, Intermediate: 4096, OutHidden: 2048,
		NumPositionEmbedding: 2304, Deepstack: []int{5, 11, 17}},
	"qwen3-vl-8b": {ModelType: "qwen3_vl", Depth: 27, Hidden: 1152, Heads: 16, Intermediate: 4304, OutHidden: 4096,
		NumPositionEmbedding: 2304, Deepstack: []int{8, 16, 24}},
	"qwen3.5-0.8b": {ModelType: "qwen3_5", Depth: 12, Hidden: 768, Heads: 12, Intermediate: 3072, OutHidden: 1024,
		NumPositionEmbedding: 2304},
	// Qwen2-VL: embed_dim 1280, mlp_ratio 4, no position table; hidden_size (the merger's output)
	// is the language model's width: 1536 (2B), 3584 (7B).
	"tiny-qwen2-vl": {ModelType: "qwen2_vl", Depth: 4, Hidden: 64, Heads: 4, Intermediate: 256, OutHidden: 96},
	"qwen2-vl-2b":   {ModelType: "qwen2_vl", Depth: 32, Hidden: 1280, Heads: 16, Intermediate: 5120, OutHidden: 1536},
	"qwen2-vl-7b":   {ModelType: "qwen2_vl", Depth: 32, Hidden: 1280, Heads: 16, Intermediate: 5120, OutHidden: 3584},
	// Qwen2.5-VL: 32 blocks of 1280, a gated MLP of 3420, windows of 112 px, full attention in
	// blocks 7, 15, 23, 31; the merger's output is the language model's width.
	"tiny-qwen2.5-vl": {ModelType: "qwen2_5_vl", Depth: 4, Hidden: 64, Heads: 4, Intermediate: 120, OutHidden: 96,
		WindowSize: 56, FullAttBlocks: []int{1, 3}},
	"qwen2.5-vl-3b": {ModelType: "qwen2_5_vl", Depth: 32, Hidden: 1280, Heads: 16, Intermediate: 3420, OutHidden: 2048,
		WindowSize: 112, FullAttBlocks: []int{7, 15, 23, 31}},
	"qwen2.5-vl-7b": {ModelType: "qwen2_5_vl", Depth: 32, Hidden: 1280, Heads: 16, Intermediate: 3420, OutHidden: 3584,
		WindowSize: 112, FullAttBlocks: []int{7, 15, 23, 31}},
	"demo": demoConfig, // constructed weights: demo.go
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var out []string
	for k := range presets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Preset returns a preset's config with the fields its family's released towers share
// (model.Family.Defaults).
func Preset(name string) (engine.Config, error) {
	c, ok := presets[name]
	if !ok {
		return engine.Config{}, fmt.Errorf("unknown preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	f := model.Lookup(c.ModelType)
	if f == nil {
		return engine.Config{}, fmt.Errorf("preset %q: model_type %q has no family", name, c.ModelType)
	}
	f.Defaults(&c)
	c.Deepstack = append([]int(nil), c.Deepstack...)
	return c, c.Validate()
}

// writeConfigs writes config.json and preprocessor_config.json into dir, as the family's hub
// repos write them (model.Family.Files).
func writeConfigs(dir string, c engine.Config, dt dtype.DType) error {
	torchDType := map[dtype.DType]string{dtype.BF16: "bfloat16", dtype.F16: "float16", dtype.F32: "float32"}[dt]
	f := model.Lookup(c.ModelType)
	if f == nil {
		return fmt.Errorf("model_type %q has no family", c.ModelType)
	}
	cfg, pre, err := f.Files(c, torchDType)
	if err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "preprocessor_config.json"), pre)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Init says how a tensor is filled: value = Mean + Std * u, u uniform with unit variance.
type Init struct{ Mean, Std float64 }

// initFor follows HF's initializer in spirit: linear and embedding weights std 0.02, small
// biases so the bias paths are exercised, LayerNorm gains around 1.
func initFor(name string) Init {
	switch {
	case strings.HasSuffix(name, "norm.weight") || strings.HasSuffix(name, "norm1.weight") || strings.HasSuffix(name, "norm2.weight") ||
		strings.HasSuffix(name, "ln_q.weight"):
		return Init{1, 0.1}
	case strings.HasSuffix(name, ".bias"):
		return Init{0, 0.02}
	}
	return Init{0, 0.02}
}

// Options for Write.
type Options struct {
	DType  dtype.DType // BF16, F16 or F32
	Seed   uint64
	Prefix string                                   // tensor prefix, "model.visual." by default
	Fill   func(name string, shape []int) []float32 // optional: explicit values (the demo model)
}

// Generate writes preset's checkpoint into dir: the demo preset's constructed weights
// (f32 unless o.DType says otherwise; o.Seed and o.Fill are ignored), any other preset's
// random weights as Write makes them.
func Generate(dir, preset string, o Options) error {
	c, err := Preset(preset)
	if err != nil {
		return err
	}
	if preset == "demo" {
		if o.DType == "" {
			o.DType = dtype.F32
		}
		ts := buildDemo(c)
		o.Fill = func(name string, _ []int) []float32 { return ts[name] }
	}
	return Write(dir, c, o)
}

// Write writes a full random checkpoint for c into dir (created if needed).
func Write(dir string, c engine.Config, o Options) error {
	if o.DType == "" {
		o.DType = dtype.BF16
	}
	if !o.DType.IsFloatWeight() {
		return fmt.Errorf("dtype %q: want bf16, f16 or f32", o.DType)
	}
	if o.Prefix == "" {
		o.Prefix = "model.visual."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeConfigs(dir, c, o.DType); err != nil {
		return err
	}
	specs := c.ExpectedTensors()
	ss := make([]safetensors.Spec, len(specs))
	for i, s := range specs {
		ss[i] = safetensors.Spec{Name: o.Prefix + s.Name, DType: o.DType, Shape: s.Shape}
	}
	w, err := safetensors.Create(filepath.Join(dir, "model.safetensors"), ss, map[string]string{"format": "pt"})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x7475726273706b))
	for i, s := range specs {
		var vals []float32
		if o.Fill != nil {
			vals = o.Fill(s.Name, s.Shape)
		}
		if vals == nil {
			vals = randomValues(rng, s, initFor(s.Name))
		}
		if err := w.WriteF32(ss[i].Name, vals); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

func randomValues(rng *rand.Rand, s engine.TensorSpec, in Init) []float32 {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	a := in.Std * math.Sqrt(3) // uniform on [-a, a] has std a/sqrt(3)
	out := make([]float32, n)
	for i := range out {
		// float64(...) around each product: no fused multiply-add (Go on arm64 fuses them),
		// so a seed gives the same file on every machine.
		u := float64(2*rng.Float64()) - 1
		out[i] = float32(in.Mean + float64(a*u))
	}
	return out
}
