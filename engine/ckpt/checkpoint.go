// Package ckpt is the engine's checkpoint room: a Hugging Face checkpoint directory opened and
// checked (checkpoint.go, config.go; a repo id found in the local cache, hfcache.go), the page
// its processor makes (page.go), and its vision weights held in host memory, mapped or pread
// (residency.go, weights.go, region.go; the pages mapped ahead, prefault_*.go and
// populate_*.go). It asks engine/guard before it allocates what may not fit, and imports no
// other engine room; the engine root aliases its names (engine/face.go).
package ckpt

// checkpoint.go opens a Hugging Face checkpoint directory and finds the vision tensors.
//
// Invariant: after OpenCheckpoint every tensor the graph reads is present with the expected
// shape and a float dtype, and lies inside a shard that is inside the directory; only the
// shards that hold vision tensors are opened at all (a real directory also holds a
// multi-GB language model). The mutation that would silently break it: resolving a shard
// name from model.safetensors.index.json without checking it stays in the directory.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/jsonobj"
)

// Prefixes accepted for vision tensors, in the order they are tried.
var visionPrefixes = []string{"model.visual.", "visual."}

// located is one vision tensor: where it lies and what it should be.
type located struct {
	Spec model.TensorSpec
	File *safetensors.File
	Info safetensors.TensorInfo
}

// Weight bytes of the tensor.
func (l located) Bytes() int64 { return l.Info.End - l.Info.Begin }

// Checkpoint is an opened, checked checkpoint directory.
type Checkpoint struct {
	Dir             string
	Config          model.Config
	Pre             imageproc.Config
	HasPreprocessor bool   // false: the HF class defaults apply (spec section 3)
	Prefix          string // "model.visual." or "visual."
	Shards          []*safetensors.File
	// Ignored are the vision tensors (under Prefix) that the config does not use — more
	// blocks than depth, another model type's deepstack mergers — sorted: said, never read.
	Ignored []string
	tensors map[string]located
}

// Files are the checkpoint's files the engine reads: the configs, the shard index, the
// shards (outputs must never be written over them).
func (c *Checkpoint) Files() []string {
	files := []string{filepath.Join(c.Dir, "config.json"), filepath.Join(c.Dir, "preprocessor_config.json"),
		filepath.Join(c.Dir, "model.safetensors.index.json")}
	for _, sh := range c.Shards {
		files = append(files, sh.Path)
	}
	return files
}

// Tensor returns a checked vision tensor by its short name (e.g. "blocks.0.norm1.weight").
func (c *Checkpoint) Tensor(name string) located { return c.tensors[name] }

// VisionBytes is the total size of the vision weights.
func (c *Checkpoint) VisionBytes() int64 {
	var n int64
	for _, l := range c.tensors {
		n += l.Bytes()
	}
	return n
}

// tensorBytes sums the stored size of the named tensors.
func (c *Checkpoint) tensorBytes(specs []model.TensorSpec) int64 {
	var n int64
	for _, sp := range specs {
		n += c.tensors[sp.Name].Bytes()
	}
	return n
}

// DTypeCounts counts vision tensors by dtype.
func (c *Checkpoint) DTypeCounts() map[dtype.DType]int {
	m := map[dtype.DType]int{}
	for _, l := range c.tensors {
		m[l.Info.DType]++
	}
	return m
}

// OpenCheckpoint reads config.json, preprocessor_config.json (optional) and the headers of
// the safetensors shard(s) in dir, and checks every vision tensor.
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	cfg, err := loadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	pre, has, err := loadPreprocessorConfig(filepath.Join(dir, "preprocessor_config.json"))
	if err != nil {
		return nil, err
	}
	if has && (pre.PatchSize != cfg.PatchSize || pre.MergeSize != cfg.MergeSize || pre.TemporalPatchSize != cfg.TemporalPatchSize) {
		return nil, fmt.Errorf("%s: patch_size %d / merge_size %d / temporal_patch_size %d disagree with config.json's vision_config (%d / %d / %d)",
			filepath.Join(dir, "preprocessor_config.json"), pre.PatchSize, pre.MergeSize, pre.TemporalPatchSize,
			cfg.PatchSize, cfg.MergeSize, cfg.TemporalPatchSize)
	}
	if !has {
		// Without the json the class defaults (patch 14) cannot feed a patch-16 tower;
		// keep their mean/std and pixel bounds but follow the model's patch geometry.
		pre.PatchSize, pre.MergeSize, pre.TemporalPatchSize = cfg.PatchSize, cfg.MergeSize, cfg.TemporalPatchSize
	}
	ck := &Checkpoint{Dir: dir, Config: cfg, Pre: pre, HasPreprocessor: has, tensors: map[string]located{}}
	where, err := ck.weightMap()
	if err != nil {
		return nil, err
	}
	if err := ck.locate(where); err != nil {
		return nil, err
	}
	return ck, nil
}

// maxIndexBytes bounds model.safetensors.index.json (a 1,000-shard model's is a few MB).
const maxIndexBytes = 64 << 20

// weightMap returns, for every tensor name in the checkpoint, the shard file that holds it.
func (c *Checkpoint) weightMap() (map[string]string, error) {
	single := filepath.Join(c.Dir, "model.safetensors")
	if _, err := os.Stat(single); err == nil {
		f, err := openChecked(single)
		if err != nil {
			return nil, err
		}
		c.Shards = []*safetensors.File{f}
		m := map[string]string{}
		for name := range f.Tensors {
			m[name] = "model.safetensors"
		}
		return m, nil
	}
	idx := filepath.Join(c.Dir, "model.safetensors.index.json")
	if st, err := os.Stat(idx); err == nil && st.Mode().IsRegular() && st.Size() <= maxIndexBytes {
		if err := guard.CheckParse(idx, "shard index", st.Size()); err != nil {
			return nil, err
		}
	}
	data, err := fsx.ReadSmall(idx, maxIndexBytes)
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("%s: neither model.safetensors nor model.safetensors.index.json is there", c.Dir)
	}
	if err != nil {
		return nil, err
	}
	var ij struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := jsonobj.Unmarshal(data, idx, &ij); err != nil {
		return nil, err
	}
	if ij.WeightMap == nil {
		return nil, fmt.Errorf("%s: no weight_map", idx)
	}
	for name, shard := range ij.WeightMap {
		if strings.IndexFunc(shard, unicode.IsControl) >= 0 || shard == "" {
			return nil, fmt.Errorf("%s: tensor %q names shard %q, which is not a file name (empty, or a NUL or control character in it)", idx, name, shard)
		}
		if !filepath.IsLocal(shard) || strings.ContainsRune(shard, os.PathSeparator) || strings.Contains(shard, "/") {
			return nil, fmt.Errorf("%s: tensor %q names shard %q outside the checkpoint directory", idx, name, shard)
		}
	}
	return ij.WeightMap, nil
}

// locate picks the prefix, opens the shards that hold vision tensors and checks each one.
func (c *Checkpoint) locate(where map[string]string) error {
	for _, p := range visionPrefixes {
		if _, ok := where[p+"patch_embed.proj.weight"]; ok {
			c.Prefix = p
			break
		}
	}
	if c.Prefix == "" {
		return fmt.Errorf("%s: no vision tower: neither model.visual.patch_embed.proj.weight nor visual.patch_embed.proj.weight is in the checkpoint", c.Dir)
	}
	opened := map[string]*safetensors.File{}
	for _, f := range c.Shards {
		opened[filepath.Base(f.Path)] = f
	}
	for _, spec := range c.Config.ExpectedTensors() {
		full := c.Prefix + spec.Name
		shard, ok := where[full]
		if !ok {
			return fmt.Errorf("%s: missing tensor %q", c.Dir, full)
		}
		f, err := c.openShard(opened, shard)
		if err != nil {
			return err
		}
		info, ok := f.Tensors[full]
		if !ok {
			return fmt.Errorf("%s: missing tensor %q (the index names this shard for it)", f.Path, full)
		}
		if err := checkTensor(f.Path, info, spec); err != nil {
			return err
		}
		c.tensors[spec.Name] = located{Spec: spec, File: f, Info: info}
	}
	for name := range where {
		if short, ok := strings.CutPrefix(name, c.Prefix); ok {
			if _, used := c.tensors[short]; !used {
				c.Ignored = append(c.Ignored, name)
			}
		}
	}
	sort.Strings(c.Ignored)
	return nil
}

// IgnoredNote says what the checkpoint holds that the config does not use ("" if nothing).
func (c *Checkpoint) IgnoredNote() string {
	if len(c.Ignored) == 0 {
		return ""
	}
	show := c.Ignored[:min(3, len(c.Ignored))]
	more := ""
	if len(c.Ignored) > len(show) {
		more = fmt.Sprintf(" and %d more", len(c.Ignored)-len(show))
	}
	return fmt.Sprintf("%d vision tensors are not used by this config and were ignored: %s%s", len(c.Ignored), strings.Join(show, ", "), more)
}

func (c *Checkpoint) openShard(opened map[string]*safetensors.File, shard string) (*safetensors.File, error) {
	if f, ok := opened[shard]; ok {
		return f, nil
	}
	f, err := openChecked(filepath.Join(c.Dir, shard))
	if err != nil {
		return nil, err
	}
	opened[shard] = f
	c.Shards = append(c.Shards, f)
	sort.Slice(c.Shards, func(i, j int) bool { return c.Shards[i].Path < c.Shards[j].Path })
	return f, nil
}

// openChecked opens a shard's header once what parsing it holds was checked to fit.
func openChecked(path string) (*safetensors.File, error) {
	n, err := safetensors.HeaderLength(path)
	if err != nil {
		return nil, err
	}
	if err := guard.CheckParse(path, "safetensors header", n); err != nil {
		return nil, err
	}
	return safetensors.Open(path)
}

func checkTensor(path string, info safetensors.TensorInfo, spec model.TensorSpec) error {
	if !info.DType.IsFloatWeight() {
		return fmt.Errorf("%s: tensor %q: dtype %s is not supported (F32, BF16 or F16)", path, info.Name, info.DType)
	}
	if !equalShape(info.Shape, spec.Shape) {
		return fmt.Errorf("%s: tensor %q: shape %v, the config needs %v", path, info.Name, info.Shape, spec.Shape)
	}
	return nil
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
