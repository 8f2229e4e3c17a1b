package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeBigPNG writes a w x h RGB PNG (a gradient: small on disk, w*h pixels decoded).
func writeBigPNG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	path := filepath.Join(t.TempDir(), "big.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Under ulimit -v (RLIMIT_AS) the CLI refuses what does not fit, naming the limit and what it
// would need, and exits 1: never "fatal error: out of memory", never a signal. A 3000x3000
// image at max pixels 2^24 (a 35,000-patch page), bench and gpumodel at 2^20 patches (refused
// before the page is made, within seconds); the tiny checkpoint's own page runs.
func TestUnderAddressLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS is enforced on Linux only")
	}
	bin := buildInspector(t)
	big := writeBigPNG(t, 3000, 3000)
	// The binary maps about 1.35 GiB as it starts here (the Go runtime's reservations, 1.1 GiB
	// of them, and an 8 MiB stack a thread): 2 GiB, and a thread's stack more a core.
	limit := fmt.Sprint(2<<20 + 8<<10*runtime.NumCPU())
	tiny := "testdata/e2e/tiny"
	for _, c := range []struct {
		args []string
		ok   bool
		want []string
	}{
		{[]string{"run", "--checkpoint", tiny, "--image", big, "--max-pixels", "16777216", "--quiet"}, false,
			[]string{"ulimit -v (RLIMIT_AS)", "it would need ulimit -v "}},
		{[]string{"bench", "--checkpoint", tiny, "--patches", "1048576"}, false,
			[]string{"--patches 1048576", "ulimit -v (RLIMIT_AS)", "it would need ulimit -v ", "fewer patches"}},
		{[]string{"gpumodel", "--checkpoint", tiny, "--patches", "16,1048576"}, false,
			[]string{"--patches 1048576", "ulimit -v (RLIMIT_AS)"}},
		{[]string{"run", "--checkpoint", tiny, "--image", "testdata/e2e/cat.png", "--quiet"}, true, nil},
	} {
		start := time.Now()
		cmd := exec.Command("bash", append([]string{"-c", `ulimit -v "$0" && exec "$@"`, limit, bin}, c.args...)...)
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		ee, exited := err.(*exec.ExitError)
		switch {
		case strings.Contains(string(out), "fatal error") || exited && ee.ExitCode() < 0:
			t.Errorf("%v under ulimit -v %s died: %v\n%s", c.args, limit, err, out)
		case c.ok && err != nil:
			t.Errorf("%v under ulimit -v %s: %v\n%s", c.args, limit, err, out)
		case !c.ok && (!exited || ee.ExitCode() != 1):
			t.Errorf("%v under ulimit -v %s: %v, want it refused (exit 1)\n%s", c.args, limit, err, out)
		case !c.ok && took > 20*time.Second:
			t.Errorf("%v under ulimit -v %s refused after %v, want it refused before the work", c.args, limit, took)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%v under ulimit -v %s: the message lacks %q:\n%s", c.args, limit, w, out)
			}
		}
	}
}

// At ulimit -v 1.5 GiB the rest is refused before it allocates, never a Go fatal error or a
// crash in C: gen's largest tensor (the 8B), a shard whose header would take a gigabyte to
// parse, a huge shard index, and the window (its GL driver needs more address space).
func TestUnderAddressLimitEverything(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS is enforced on Linux only")
	}
	bin := buildInspector(t)
	const limit = "1572864" // 1.5 GiB
	hugeHeader := filepath.Join(t.TempDir(), "ck")
	os.MkdirAll(hugeHeader, 0o755)
	cfg, _ := os.ReadFile("testdata/e2e/tiny/config.json")
	os.WriteFile(filepath.Join(hugeHeader, "config.json"), cfg, 0o644)
	n := 90_000_000 // under the 100 MB bound: parsing it would hold ~1 GB
	f, err := os.Create(filepath.Join(hugeHeader, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), 0, 0, 0, 0})
	f.Truncate(int64(8 + n)) // sparse: nothing on disk
	f.Close()
	hugeIndex := filepath.Join(t.TempDir(), "ck")
	os.MkdirAll(hugeIndex, 0o755)
	os.WriteFile(filepath.Join(hugeIndex, "config.json"), cfg, 0o644)
	os.WriteFile(filepath.Join(hugeIndex, "model.safetensors.index.json"), nil, 0o644)
	os.Truncate(filepath.Join(hugeIndex, "model.safetensors.index.json"), 60<<20) // sparse
	for _, c := range []struct {
		args []string
		env  string
		want []string
	}{
		{[]string{"gen", "--preset", "qwen3-vl-8b", "--out", filepath.Join(t.TempDir(), "g")}, "", []string{"gen --preset qwen3-vl-8b", "it would need ulimit -v "}},
		{[]string{"verify", "--checkpoint", hugeHeader}, "", []string{"model.safetensors: parsing its safetensors header", "it would need ulimit -v "}},
		{[]string{"verify", "--checkpoint", hugeIndex}, "", []string{"model.safetensors.index.json: parsing its shard index", "it would need ulimit -v "}},
		{[]string{"gui", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png"}, "DISPLAY=:987", []string{"the window needs at least", "ulimit -v is 1572864 KiB"}},
	} {
		cmd := exec.Command("bash", append([]string{"-c", `ulimit -v "$0" && exec "$@"`, limit, bin}, c.args...)...)
		if c.env != "" {
			cmd.Env = append(os.Environ(), c.env)
		}
		out, err := cmd.CombinedOutput()
		ee, exited := err.(*exec.ExitError)
		switch {
		case strings.Contains(string(out), "fatal error") || exited && ee.ExitCode() < 0:
			t.Errorf("%v under ulimit -v %s died: %v\n%s", c.args[0], limit, err, out)
		case !exited || ee.ExitCode() != 1:
			t.Errorf("%v under ulimit -v %s: %v, want it refused (exit 1)\n%s", c.args[0], limit, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%v under ulimit -v %s: the message lacks %q:\n%s", c.args[0], limit, w, out)
			}
		}
	}
}
