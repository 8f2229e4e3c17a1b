package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine"
)

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
	}{{1 << 20, "depth = 1048576 is out of range"}, {engine.MaxDepth, `missing tensor "model.visual.blocks.4.norm1.weight"`}} {
		fx := openFixture(t, "qwen3vl_vision_tiny_f32")
		withConfig(t, fx.dir, "depth", c.depth)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := engine.OpenCheckpoint(fx.dir)
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

// The sessions open in a process are counted together: Compare's sibling beside the window's
// session is refused when the two do not fit, naming the other runs' share, and fits again
// once the first is closed.
func TestOpenSessionsCount(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	in := fx.input(t)
	s := engine.Settings{Keep: engine.Keep{Outputs: true}}
	s.MaxMemory = engine.EstimateMemory(ck, in, s).Total() * 3 / 2
	first, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", s, cpuBackend())
	must(t, err)
	if first.Memory.Total() <= 0 || first.Memory.Total() > s.MaxMemory {
		t.Fatalf("the session's estimate %v under --max-memory %d", first.Memory, s.MaxMemory)
	}
	_, err = first.Sibling(context.Background(), s, cpuBackend())
	if err == nil || !strings.Contains(err.Error(), "--max-memory") || !strings.Contains(err.Error(), "held by the other open runs") {
		t.Fatalf("a sibling past --max-memory with the first open: %v", err)
	}
	must(t, first.Close())
	again, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", s, cpuBackend())
	must(t, err)
	must(t, again.Close())
}

// A sweep that could not fit its ablated runs beside the base run is refused before the base
// run (CheckSweep), not after it; where they fit, it is not.
func TestSweepRefusedBeforeItsBaseRun(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	in := fx.input(t)
	s := engine.Settings{Keep: engine.Keep{Outputs: true}}
	est := engine.EstimateMemory(ck, in, s).Total()
	for _, c := range []struct {
		maxMemory int64
		fits      bool
	}{{est * 5 / 4, false}, {est * 4, true}} {
		s.MaxMemory = c.maxMemory
		sess, err := engine.NewSession(context.Background(), ck, in, fx.dir, "", s, cpuBackend())
		must(t, err)
		err = sess.CheckSweep()
		if (err == nil) != c.fits || (err != nil && !strings.Contains(err.Error(), "the sweep's ablated runs")) {
			t.Errorf("--max-memory %d (the run alone %d): %v", c.maxMemory, est, err)
		}
		must(t, sess.Close())
	}
}
