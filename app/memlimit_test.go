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
