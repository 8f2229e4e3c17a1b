package engine

// families.go: the model families the engine runs, each a folder under engine/model that
// registers itself there (importing it is all it takes), and the names the rest of the engine
// knows them by. Config is model.Config: a tower's shape, answering every family question.

import (
	"github.com/turbospark/inspector/engine/model"
	_ "github.com/turbospark/inspector/engine/model/qwen25vl" // Qwen2.5-VL
	_ "github.com/turbospark/inspector/engine/model/qwen2vl"  // Qwen2-VL
	_ "github.com/turbospark/inspector/engine/model/qwen3vl"  // Qwen3-VL, Qwen3.5
)

// Config is what the engine needs of config.json (engine/model).
type Config = model.Config

// TensorSpec is a vision tensor's name, shape and role (engine/model).
type TensorSpec = model.TensorSpec

// MaxDepth bounds vision_config.depth (engine/model).
const MaxDepth = model.MaxDepth

// ParseConfig parses config.json bytes; path names the file in messages.
func ParseConfig(data []byte, path string) (Config, error) { return model.ParseConfig(data, path) }

// SupportedFamilies names every family the engine runs, with its model_type values.
func SupportedFamilies() string { return model.SupportedFamilies() }
