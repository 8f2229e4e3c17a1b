package ckpt_test

import (
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
)

// preprocessor_config.json values that make no page, or a page past the bounds, are refused
// with the file named; a size without its two edges is refused as transformers refuses it.
func TestPreprocessorBounds(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"size":{}}`, "shortest_edge"},
		{`{"size":{"shortest_edge":65536}}`, "longest_edge"},
		{`{"size":{"shortest_edge":65536,"longest_edge":1000000000000}}`, "max_pixels"},
		{`{"max_pixels":0}`, "max_pixels"},
		{`{"patch_size":100000}`, "patch"},
		{`{"image_std":[0.5,1e-45,0.5]}`, "image_std"},
		{`{"rescale_factor":-1}`, "rescale_factor"},
	} {
		_, err := ckpt.ParsePreprocessorConfig([]byte(c.json), "pre.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "pre.json") {
			t.Errorf("%s: %v (want an error naming pre.json and %s)", c.json, err, c.want)
		}
	}
	if c, err := ckpt.ParsePreprocessorConfig([]byte(`{"size":{"shortest_edge":65536,"longest_edge":16384}}`), "pre.json"); err != nil || c.MinPixels != 65536 {
		t.Errorf("min above max (a lowered max): %v", err)
	}
}
