//go:build linux

package main

// The real window under Xvfb: start the app on the demo, wait for its first finished run,
// screenshot, click a patch with xdotool, screenshot again. The first shot must not be
// blank and the click must change the overlay.

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the smoke test needs %s: apt-get install xvfb xdotool imagemagick (see .ci/run)", tool)
		}
	}
}

// startXvfb starts a virtual display and returns its DISPLAY value.
func startXvfb(t *testing.T) string {
	t.Helper()
	for n := 90; n < 110; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		display := fmt.Sprintf(":%d", n)
		cmd := exec.Command("Xvfb", display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		for i := 0; i < 50; i++ {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
				return display
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("Xvfb %s did not come up", display)
	}
	t.Fatal("no free X display number")
	return ""
}

var readyLine = regexp.MustCompile(`ready; image view at (\d+),(\d+) size (\d+)x(\d+)`)

func TestSmokeRealWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no real window")
	}
	requireTools(t, "Xvfb", "xdotool", "import")
	display := startXvfb(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "inspector")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	app := exec.CommandContext(ctx, bin, "gui", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png")
	app.Env = append(os.Environ(), "DISPLAY="+display, "LANG=en_US.UTF-8", "FYNE_SCALE=1", "HOME="+dir)
	stderr, _ := app.StderrPipe()
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { app.Process.Kill(); app.Wait() }()
	geom := waitReady(t, stderr)
	env := []string{"DISPLAY=" + display}
	win := strings.Fields(run(t, env, "xdotool", "search", "--sync", "--onlyvisible", "--name", "TurboSpark Vision Inspector"))[0]
	time.Sleep(500 * time.Millisecond)
	before := filepath.Join(dir, "before.png")
	run(t, env, "import", "-window", win, before)
	// Click a quarter of the way into the image view: a different patch than the centre
	// query the app starts with.
	x, y := geom[0]+geom[2]/4, geom[1]+geom[3]/4
	run(t, env, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
	time.Sleep(1500 * time.Millisecond)
	after := filepath.Join(dir, "after.png")
	run(t, env, "import", "-window", win, after)
	a, b := readPNG(t, before), readPNG(t, after)
	if distinct := distinctColours(a); distinct < 200 {
		t.Errorf("the window looks blank: %d distinct colours", distinct)
	}
	region := image.Rect(geom[0], geom[1], geom[0]+geom[2], geom[1]+geom[3])
	if n := changedPixels(a, b, region); n < 500 {
		t.Errorf("clicking a patch changed only %d pixels of the image view", n)
	}
	if keep := os.Getenv("SMOKE_SHOTS"); keep != "" {
		copyFile(t, before, filepath.Join(keep, "before.png"))
		copyFile(t, after, filepath.Join(keep, "after.png"))
	}
}

// waitReady reads the app's stderr until it reports its first finished run.
func waitReady(t *testing.T, r interface{ Read([]byte) (int, error) }) [4]int {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the app exited before its first run finished")
			}
			if m := readyLine.FindStringSubmatch(l); m != nil {
				var g [4]int
				for i := range g {
					g[i], _ = strconv.Atoi(m[i+1])
				}
				go func() {
					for range lines {
					}
				}()
				return g
			}
		case <-timeout:
			t.Fatal("no 'ready' line from the app in 2 minutes")
		}
	}
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func distinctColours(img image.Image) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	return len(seen)
}

func changedPixels(a, b image.Image, region image.Rectangle) int {
	n := 0
	region = region.Intersect(a.Bounds()).Intersect(b.Bounds())
	for y := region.Min.Y; y < region.Max.Y; y++ {
		for x := region.Min.X; x < region.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				n++
			}
		}
	}
	return n
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}
