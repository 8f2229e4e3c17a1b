package tower_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/synth"
	"github.com/turbospark/inspector/engine/tower"
)

// Both residency modes hand the graph the same bytes: outputs are bit-identical.
func TestMappedEqualsPread(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	in := fx.input(t)
	mapped := runTower(t, fx.dir, cpuBackend(), tower.Settings{Residency: ckpt.Mapped}, in)
	for _, slots := range []int{2, 3} {
		pread := runTower(t, fx.dir, cpuBackend(), tower.Settings{Residency: ckpt.Pread, Slots: slots}, in)
		for name, m := range towerOutputs(mapped) {
			if !bitEqual(m, towerOutputs(pread)[name]) {
				t.Errorf("slots %d: %s differs between mapped and pread", slots, name)
			}
		}
	}
}

// Outputs do not depend on the MLP tile: 1 row, uneven tiles, one tile, more than S.
func TestTileInvariance(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	in := fx.input(t)
	ref := towerOutputs(runTower(t, fx.dir, cpuBackend(), tower.Settings{TileRows: 176}, in))
	for _, tile := range []int{1, 7, 64, 175, 100000} {
		got := towerOutputs(runTower(t, fx.dir, cpuBackend(), tower.Settings{TileRows: tile}, in))
		for name, r := range ref {
			if !bitEqual(got[name], r) {
				t.Errorf("tile %d: %s differs from the single-tile run", tile, name)
			}
		}
	}
}

// shard splits a generated checkpoint's model.safetensors into two shards plus an index,
// with a fake language-model tensor in each and a third, language-only shard that is missing.
func shard(t *testing.T, dir string) {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	must(t, err)
	var parts [2][]safetensors.Tensor
	weightMap := map[string]string{}
	for i, ti := range f.Sorted() {
		raw, err := f.ReadRaw(ti.Name)
		must(t, err)
		parts[i%2] = append(parts[i%2], safetensors.Tensor{Spec: safetensors.Spec{Name: ti.Name, DType: ti.DType, Shape: ti.Shape}, Data: raw})
	}
	for k := range parts {
		name := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[k]
		lm := safetensors.F32Tensor("model.language_model.layers."+name[6:11]+".weight", []int{3}, []float32{1, 2, 3})
		parts[k] = append([]safetensors.Tensor{lm}, parts[k]...)
		for _, ts := range parts[k] {
			weightMap[ts.Name] = name
		}
		must(t, safetensors.WriteFile(filepath.Join(dir, name), parts[k], nil))
	}
	// A language-model shard that is not even there: only vision shards may be opened.
	weightMap["model.language_model.embed_tokens.weight"] = "model-00003-of-00003.safetensors"
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 0}, "weight_map": weightMap})
	must(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644))
	must(t, os.Remove(filepath.Join(dir, "model.safetensors")))
}

// A sharded bf16 checkpoint with a bare "visual." prefix: same bits single-file and sharded,
// mapped and pread.
func TestShardedBF16(t *testing.T) {
	cfg, err := synth.Preset("tiny")
	must(t, err)
	single, sharded := t.TempDir(), t.TempDir()
	for _, d := range []string{single, sharded} {
		must(t, synth.Write(d, cfg, synth.Options{DType: dtype.BF16, Seed: 7, Prefix: "visual."}))
	}
	shard(t, sharded)
	in := randomInput(cfg, []geom.Grid{{T: 1, H: 4, W: 6}, {T: 1, H: 2, W: 2}})
	ref := runTower(t, single, cpuBackend(), tower.Settings{}, in)
	for _, mode := range []ckpt.ResidencyMode{ckpt.Mapped, ckpt.Pread} {
		got := runTower(t, sharded, cpuBackend(), tower.Settings{Residency: mode}, in)
		for name, r := range towerOutputs(ref) {
			if !bitEqual(towerOutputs(got)[name], r) {
				t.Errorf("sharded %s: %s differs from single-file", mode, name)
			}
		}
	}
	ck, err := ckpt.OpenCheckpoint(sharded)
	must(t, err)
	if len(ck.Shards) != 2 || ck.Prefix != "visual." {
		t.Errorf("shards %d prefix %q, want 2 and visual.", len(ck.Shards), ck.Prefix)
	}
}

func randomInput(cfg model.Config, grids []geom.Grid) *ckpt.Input {
	n := 0
	for _, g := range grids {
		n += g.Patches()
	}
	px := make([]float32, n*cfg.PatchDim())
	s := uint32(12345)
	for i := range px {
		s = s*1664525 + 1013904223
		px[i] = float32(s>>8)/float32(1<<24)*2 - 1
	}
	return &ckpt.Input{Pixels: px, Grids: grids}
}

// pread reports the bytes it read and streams: every block's weights are read once, and a
// deepstack merger's when it runs, after its block (counted in that block's bytes).
func TestPreadReportsBytes(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	eng, err := tower.NewEngine(ck, cpuBackend(), tower.Settings{Residency: ckpt.Pread})
	must(t, err)
	defer eng.Close()
	run, err := eng.Start(fx.input(t))
	must(t, err)
	defer run.Close()
	must(t, run.RunAll(context.Background()))
	for i, tm := range run.Timings {
		var want int64
		for _, s := range ck.Config.BlockTensors(i) {
			want += ck.Tensor(s.Name).Bytes()
		}
		for k, d := range ck.Config.Deepstack {
			if d == i {
				for _, s := range ck.Config.MergerTensors(fmt.Sprintf("deepstack_merger_list.%d.", k)) {
					want += ck.Tensor(s.Name).Bytes()
				}
			}
		}
		if tm.BytesRead != want {
			t.Errorf("block %d: read %d bytes, its weights are %d", i, tm.BytesRead, want)
		}
	}
}
