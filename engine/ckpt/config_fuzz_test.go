package ckpt_test

import (
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/model"
)

// Config parsing never panics, and what it accepts passes Validate (the graph relies on it).
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"model_type":"qwen3_vl","vision_config":{"depth":2,"hidden_size":64,"num_heads":4,"intermediate_size":8,"out_hidden_size":8,"deepstack_visual_indexes":[1]}}`))
	f.Add([]byte(`{"model_type":"qwen3_5","vision_config":{"depth":1,"hidden_size":8,"num_heads":2,"intermediate_size":1,"out_hidden_size":1,"rope_parameters":{"rope_theta":5}}}`))
	f.Add([]byte(`{"model_type":"qwen3_vl","vision_config":{"depth":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := model.ParseConfig(data, "config.json")
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("accepted a config Validate refuses: %v", verr)
			}
			_ = c.ExpectedTensors()
		}
		_, _ = ckpt.ParsePreprocessorConfig(data, "preprocessor_config.json")
	})
}
