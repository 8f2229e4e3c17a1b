package engine_test

// fault_test.go: a mapped checkpoint truncated under a run (another program rewriting it,
// `gen --force` into the folder) gives that run an error naming the file; the process lives
// on, and pread mode, which copies, is not affected.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
)

func TestTruncatedWhileMapped(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	dir := t.TempDir()
	for _, name := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(fx.dir, name))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	model := filepath.Join(dir, "model.safetensors")
	ck, err := engine.OpenCheckpoint(dir)
	must(t, err)
	sess, err := engine.NewSession(context.Background(), ck, fx.input(t), dir, "", engine.Settings{Residency: engine.Mapped}, cpuBackend())
	must(t, err)
	defer sess.Close()
	must(t, sess.Step(context.Background()))
	must(t, os.Truncate(model, 4096)) // every weight of the later blocks is gone
	err = sess.RunAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), model) || !strings.Contains(err.Error(), "changed while the run had it mapped") {
		t.Fatalf("the run over a truncated mapping: %v (want an error naming %s)", err, model)
	}
	t.Log(err)
}
