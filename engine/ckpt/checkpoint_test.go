package ckpt_test

// checkpoint_test.go: hostile checkpoints. Each broken file, config or index is refused by
// OpenCheckpoint with an error naming the file and the tensor or field, never a panic, and a
// config claiming a huge depth is refused from the config before its tensor list is made.

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/safetensors"
)

// rawSafetensors writes a file from a header map and a data section, byte for byte.
func rawSafetensors(t *testing.T, path string, header any, data []byte) {
	t.Helper()
	js, err := json.Marshal(header)
	must(t, err)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	must(t, os.WriteFile(path, append(append(b, js...), data...), 0o644))
}

// rewriteTensors rewrites model.safetensors with edit applied to its tensor list.
func rewriteTensors(t *testing.T, dir string, edit func([]safetensors.Tensor) []safetensors.Tensor) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	must(t, err)
	var ts []safetensors.Tensor
	for _, ti := range f.Sorted() {
		raw, err := f.ReadRaw(ti.Name)
		must(t, err)
		ts = append(ts, safetensors.Tensor{Spec: safetensors.Spec{Name: ti.Name, DType: ti.DType, Shape: ti.Shape}, Data: raw})
	}
	must(t, safetensors.WriteFile(path, edit(ts), nil))
}

func editConfig(t *testing.T, dir string, edit func(vision map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	must(t, err)
	var cfg map[string]any
	must(t, json.Unmarshal(b, &cfg))
	edit(cfg["vision_config"].(map[string]any))
	b, _ = json.Marshal(cfg)
	must(t, os.WriteFile(path, b, 0o644))
}

const qkv0 = "model.visual.blocks.0.attn.qkv.weight"

// Each bad checkpoint gets an error naming the file and the tensor or field, never a panic.
func TestBadCheckpoints(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   []string
	}{
		{"missing tensor", func(t *testing.T, dir string) {
			rewriteTensors(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
				for i := range ts {
					if ts[i].Name == qkv0 {
						return append(ts[:i], ts[i+1:]...)
					}
				}
				return ts
			})
		}, []string{"missing tensor", qkv0}},
		{"wrong shape", func(t *testing.T, dir string) {
			rewriteTensors(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
				for i := range ts {
					if ts[i].Name == qkv0 {
						ts[i].Shape = []int{64, 192} // [in, out]: the transposed layout
					}
				}
				return ts
			})
		}, []string{"model.safetensors", qkv0, "shape [64 192]", "[192 64]"}},
		{"integer dtype", func(t *testing.T, dir string) {
			rewriteTensors(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
				for i := range ts {
					if ts[i].Name == qkv0 {
						ts[i].DType = dtype.I32
					}
				}
				return ts
			})
		}, []string{"model.safetensors", qkv0, "I32", "not supported"}},
		{"unknown dtype", func(t *testing.T, dir string) {
			rawSafetensors(t, filepath.Join(dir, "model.safetensors"),
				map[string]any{qkv0: map[string]any{"dtype": "F8_E9", "shape": []int{2}, "data_offsets": []int{0, 2}}}, make([]byte, 2))
		}, []string{"model.safetensors", qkv0, `unknown dtype "F8_E9"`}},
		{"truncated file", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.safetensors")
			st, _ := os.Stat(p)
			must(t, os.Truncate(p, st.Size()-100))
		}, []string{"model.safetensors", "out of bounds"}},
		{"file shorter than the length field", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte{1, 2, 3}, 0o644))
		}, []string{"model.safetensors", "truncated"}},
		{"header length past the end", func(t *testing.T, dir string) {
			b := binary.LittleEndian.AppendUint64(nil, 1<<40)
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), append(b, "{}"...), 0o644))
		}, []string{"model.safetensors", "header length 1099511627776 runs past the end"}},
		{"offsets out of bounds", func(t *testing.T, dir string) {
			rawSafetensors(t, filepath.Join(dir, "model.safetensors"),
				map[string]any{qkv0: map[string]any{"dtype": "F32", "shape": []int{4}, "data_offsets": []int{0, 16}}}, make([]byte, 8))
		}, []string{"model.safetensors", qkv0, "out of bounds"}},
		{"offsets disagree with shape", func(t *testing.T, dir string) {
			rawSafetensors(t, filepath.Join(dir, "model.safetensors"),
				map[string]any{qkv0: map[string]any{"dtype": "F32", "shape": []int{4}, "data_offsets": []int{0, 8}}}, make([]byte, 16))
		}, []string{"model.safetensors", qkv0, "needs 16"}},
		{"overlapping tensors", func(t *testing.T, dir string) {
			rawSafetensors(t, filepath.Join(dir, "model.safetensors"), map[string]any{
				"a": map[string]any{"dtype": "F32", "shape": []int{4}, "data_offsets": []int{0, 16}},
				"b": map[string]any{"dtype": "F32", "shape": []int{4}, "data_offsets": []int{8, 24}},
			}, make([]byte, 24))
		}, []string{"model.safetensors", `"a"`, `"b"`, "overlap"}},
		{"invalid header JSON", func(t *testing.T, dir string) {
			b := binary.LittleEndian.AppendUint64(nil, 5)
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), append(b, "{oops"...), 0o644))
		}, []string{"model.safetensors", "invalid JSON header"}},
		{"invalid config JSON", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "qwen3_vl",`), 0o644))
		}, []string{"config.json", "invalid JSON"}},
		{"config missing depth", func(t *testing.T, dir string) {
			editConfig(t, dir, func(v map[string]any) { delete(v, "depth") })
		}, []string{"config.json", `missing "depth"`}},
		{"hidden not divisible by heads", func(t *testing.T, dir string) {
			editConfig(t, dir, func(v map[string]any) { v["num_heads"] = 5 })
		}, []string{"config.json", "hidden_size 64 is not divisible by num_heads 5"}},
		{"odd head_dim", func(t *testing.T, dir string) {
			editConfig(t, dir, func(v map[string]any) { v["hidden_size"] = 63; v["num_heads"] = 7 })
		}, []string{"config.json", "head_dim 9"}},
		{"deepstack index past the tower", func(t *testing.T, dir string) {
			editConfig(t, dir, func(v map[string]any) { v["deepstack_visual_indexes"] = []int{1, 9} })
		}, []string{"config.json", "deepstack_visual_indexes[1] = 9"}},
		{"unknown model type", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "llava", "vision_config": {}}`), 0o644))
		}, []string{"config.json", `model_type "llava"`}},
		{"config with a byte-order mark", func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, "config.json"))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, "config.json"), append([]byte("\xef\xbb\xbf"), b...), 0o644))
		}, []string{"config.json", "byte-order mark"}},
		{"config that is null", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("null\n"), 0o644))
		}, []string{"config.json", "holds null, want a JSON object"}},
		{"preprocessor that is null", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(" null"), 0o644))
		}, []string{"preprocessor_config.json", "holds null, want a JSON object"}},
		{"preprocessor that is an array", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte("[]"), 0o644))
		}, []string{"preprocessor_config.json", "holds an array"}},
		{"index that is empty", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "model.safetensors")))
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), nil, 0o644))
		}, []string{"model.safetensors.index.json", "empty, want a JSON object"}},
		{"invalid preprocessor JSON", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(`{"patch_size": [1,`), 0o644))
		}, []string{"preprocessor_config.json", "invalid JSON"}},
		{"index names a shard outside the directory", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "model.safetensors")))
			idx := `{"weight_map": {"` + qkv0 + `": "../elsewhere/model.safetensors"}}`
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(idx), 0o644))
		}, []string{"model.safetensors.index.json", qkv0, "outside the checkpoint directory"}},
		{"index names a shard with a NUL in it", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "model.safetensors")))
			idx := `{"weight_map": {"` + qkv0 + `": "model\u0000.safetensors"}}`
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(idx), 0o644))
		}, []string{"model.safetensors.index.json", qkv0, `"model\x00.safetensors"`, "not a file name"}},
		{"index invalid JSON", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "model.safetensors")))
			must(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(`{"weight_map": `), 0o644))
		}, []string{"model.safetensors.index.json", "invalid JSON"}},
		{"no weights at all", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "model.safetensors")))
		}, []string{"neither model.safetensors nor model.safetensors.index.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := tinyCheckpoint(t)
			c.break_(t, dir)
			_, err := ckpt.OpenCheckpoint(dir)
			if err == nil {
				t.Fatal("opened a broken checkpoint without error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// withConfig rewrites a vision_config field of the checkpoint in dir.
func withConfig(t *testing.T, dir, field string, v any) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	must(t, err)
	var cfg map[string]any
	must(t, json.Unmarshal(b, &cfg))
	cfg["vision_config"].(map[string]any)[field] = v
	b, err = json.Marshal(cfg)
	must(t, err)
	must(t, os.WriteFile(path, b, 0o644))
}

// A config claiming 2^20 blocks is refused from the config, before a list of 12.6M tensor
// names is made; at the bound the checkpoint is found short at once.
func TestHugeDepthRefusedFast(t *testing.T) {
	for _, c := range []struct {
		depth int
		want  string
	}{{1 << 20, "depth = 1048576 is out of range"}, {model.MaxDepth, `missing tensor "model.visual.blocks.4.norm1.weight"`}} {
		fx := openFixture(t, "qwen3vl_vision_tiny_f32")
		withConfig(t, fx.dir, "depth", c.depth)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := ckpt.OpenCheckpoint(fx.dir)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("depth %d: %v, want %q", c.depth, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 || took > 2*time.Second {
			t.Errorf("depth %d: refused after allocating %d MiB in %v", c.depth, alloc>>20, took)
		}
	}
}
