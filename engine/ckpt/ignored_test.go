package ckpt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
)

// Vision tensors the config does not use (a deeper model's blocks) are named, not silently
// skipped.
func TestIgnoredTensorsSaid(t *testing.T) {
	deep, err := synth.Preset("tiny")
	must(t, err)
	deep.Depth += 2
	dir := t.TempDir()
	must(t, synth.Write(dir, deep, synth.Options{DType: dtype.F32}))
	cfgPath := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgPath)
	must(t, err)
	var cfg map[string]any
	must(t, json.Unmarshal(b, &cfg))
	cfg["vision_config"].(map[string]any)["depth"] = deep.Depth - 2 // the file holds two blocks more
	b, err = json.Marshal(cfg)
	must(t, err)
	must(t, os.WriteFile(cfgPath, b, 0o644))
	ck, err := ckpt.OpenCheckpoint(dir)
	must(t, err)
	if len(ck.Ignored) == 0 || !strings.Contains(ck.IgnoredNote(), "not used by this config") || !strings.Contains(ck.IgnoredNote(), "blocks.") {
		t.Errorf("ignored %v, note %q", ck.Ignored, ck.IgnoredNote())
	}
}
