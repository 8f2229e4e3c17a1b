//go:build linux

package main

// The real window under Xvfb: start the app on the demo checkpoint, wait for its first
// finished run, screenshot, click a patch with xdotool, screenshot again: the first shot
// must not be blank and the click must change the overlay. Then the keyboard (Ctrl+O opens
// the image dialog, Esc closes it, an arrow moves the query, Ctrl+6 and an ablation typed
// run a what-if), a clean quit on SIGTERM (and on
// SIGHUP, a closed terminal) with
// nothing on stderr but the one ready line under LANG=C.UTF-8, and a second launch without
// flags that reopens the same files. Xvfb picks its own free display and is stopped with
// SIGTERM, leaving no lock or socket.

import (
	"bufio"
	"context"
	"github.com/turbospark/inspector/internal/testfixture"
	"github.com/turbospark/inspector/selftest"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
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

// startXvfb starts a virtual display and returns its DISPLAY value. Xvfb picks a free
// display number itself (-displayfd: it skips numbers whose lock is held and reclaims stale
// ones) and writes it once it accepts connections. It is stopped with SIGTERM and waited
// for, so it removes its lock file and socket; the test fails if it did not.
func startXvfb(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1600x1000x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w} // fd 3 in Xvfb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	number := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		number <- strings.TrimSpace(line)
	}()
	var n string
	select {
	case n = <-number:
	case <-time.After(30 * time.Second):
	}
	r.Close()
	t.Cleanup(func() { stopXvfb(t, cmd, n) })
	if _, err := strconv.Atoi(n); err != nil {
		t.Fatalf("Xvfb did not say which display it took (%q)", n)
	}
	return ":" + n
}

// stopXvfb ends Xvfb cleanly and checks it left no lock or socket behind.
func stopXvfb(t *testing.T, cmd *exec.Cmd, n string) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("Xvfb :%s ignored SIGTERM for 10 s", n)
	}
	if n == "" {
		return
	}
	for _, f := range []string{"/tmp/.X" + n + "-lock", "/tmp/.X11-unix/X" + n} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("Xvfb :%s left %s behind", n, f)
		}
	}
}

var readyLine = regexp.MustCompile(`ready; image view at (\d+),(\d+) size (\d+)x(\d+); Run all at (\d+),(\d+) size (\d+)x(\d+)`)

// appProc is the window's process and every line it wrote on stderr.
type appProc struct {
	cmd   *exec.Cmd
	lines chan string
	seen  []string
	done  chan struct{} // closed when stderr is at its end
	ready int           // ready lines it must write (1: INSPECTOR_READY_LINE is set)
}

// startApp runs the binary with env (LANG=C.UTF-8, Debian's default) and collects stderr.
func startApp(t *testing.T, bin string, env []string, args ...string) *appProc {
	t.Helper()
	a := &appProc{cmd: exec.Command(bin, args...), lines: make(chan string, 1024), done: make(chan struct{}), ready: 1}
	a.cmd.Env = env
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
	}()
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
	return a
}

// waitReady reads stderr until the app reports its first finished run; it returns the
// image view's and the Run all button's x, y, width, height.
func (a *appProc) waitReady(t *testing.T) [8]int {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-a.lines:
			if !ok {
				t.Fatalf("the app exited before its first run finished: %q", a.seen)
			}
			a.seen = append(a.seen, l)
			if m := readyLine.FindStringSubmatch(l); m != nil {
				var g [8]int
				for i := range g {
					g[i], _ = strconv.Atoi(m[i+1])
				}
				return g
			}
		case <-timeout:
			t.Fatalf("no 'ready' line from the app in 2 minutes: %q", a.seen)
		}
	}
}

// stop ends the app as a desktop session does (SIGTERM: Fyne quits, windows close, the
// preferences are saved) and checks that all it wrote on stderr was the one ready line.
func (a *appProc) stop(t *testing.T) { a.stopWith(t, syscall.SIGTERM) }

// stopWith ends the app with sig: it must quit cleanly (exit 0, nothing on stderr but the
// ready line, a.ready times).
func (a *appProc) stopWith(t *testing.T, sig syscall.Signal) {
	t.Helper()
	a.cmd.Process.Signal(sig)
	timeout := time.After(30 * time.Second)
	for l := range a.lines {
		a.seen = append(a.seen, l)
		select {
		case <-timeout:
			t.Fatalf("the app did not end on %v", sig)
		default:
		}
	}
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("the app ended with %v", err)
	}
	ready := 0
	for _, l := range a.seen {
		if readyLine.MatchString(l) {
			ready++
		} else {
			t.Errorf("stderr: %s", l)
		}
	}
	if ready != a.ready {
		t.Errorf("%d ready lines, want %d", ready, a.ready)
	}
}

// windowEnv runs the app on display with its own home (preferences, caches) and Debian's
// default locale, with fyne's thread checks on (fynemeta.go): a fyne call of ours off the
// main goroutine then reports on stderr, which the smoke tests fail on.
func windowEnv(display, home string) []string {
	return append(localeEnv("LANG=C.UTF-8"), readyEnv+"=1", threadChecksEnv+"=1", "DISPLAY="+display, "FYNE_SCALE=1", "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
}

func TestSmokeRealWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no real window")
	}
	requireTools(t, "Xvfb", "xdotool", "import")
	display := startXvfb(t)
	dir := t.TempDir()
	bin := buildInspector(t)
	env := windowEnv(display, filepath.Join(dir, "home"))
	app := startApp(t, bin, env, "gui", "--checkpoint", "../assets/demo", "--image", "testdata/e2e/cat.png")
	geom := app.waitReady(t)
	xenv := []string{"DISPLAY=" + display}
	win := strings.Fields(run(t, xenv, "xdotool", "search", "--sync", "--onlyvisible", "--name", "TurboSpark Vision Inspector — cat.png"))[0]
	time.Sleep(500 * time.Millisecond)
	shot := func(name string) image.Image {
		path := filepath.Join(dir, name+".png")
		run(t, xenv, "import", "-window", win, path)
		if keep := os.Getenv("SMOKE_SHOTS"); keep != "" {
			copyFile(t, path, filepath.Join(keep, name+".png"))
		}
		return testfixture.ReadPNG(t, path)
	}
	before := shot("before")
	// Click a quarter of the way into the image view: a different patch than the centre
	// query the app starts with.
	x, y := geom[0]+geom[2]/4, geom[1]+geom[3]/4
	run(t, xenv, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
	time.Sleep(1500 * time.Millisecond)
	after := shot("after")
	if distinct := distinctColours(before); distinct < 200 {
		t.Errorf("the window looks blank: %d distinct colours", distinct)
	}
	region := image.Rect(geom[0], geom[1], geom[0]+geom[2], geom[1]+geom[3])
	if n := changedPixels(before, after, region); n < 500 {
		t.Errorf("clicking a patch changed only %d pixels of the image view", n)
	}
	// The keyboard (the pointer is over the window): Ctrl+O opens the image dialog through
	// the main menu, Esc closes it; Right moves the query one patch.
	run(t, xenv, "xdotool", "key", "ctrl+o")
	time.Sleep(1500 * time.Millisecond)
	dialog := shot("dialog")
	if n := changedPixels(after, dialog, after.Bounds()); n < 50000 {
		t.Errorf("Ctrl+O changed only %d pixels: no file dialog", n)
	}
	run(t, xenv, "xdotool", "key", "Escape")
	time.Sleep(1000 * time.Millisecond)
	closed := shot("closed")
	if n := changedPixels(after, closed, region); n > 200 {
		t.Errorf("after Esc %d pixels of the image view still differ: the dialog stayed", n)
	}
	run(t, xenv, "xdotool", "key", "Right")
	time.Sleep(1000 * time.Millisecond)
	right := shot("right")
	if n := changedPixels(closed, right, region); n < 500 {
		t.Errorf("the Right arrow changed only %d pixels of the image view", n)
	}
	// A tooltip: the pointer rests on Run all, and a box is drawn below the button.
	bx, by, bw, bh := geom[4], geom[5], geom[6], geom[7]
	run(t, xenv, "xdotool", "mousemove", "--window", win, strconv.Itoa(bx+bw/2), strconv.Itoa(by+bh/2))
	time.Sleep(1500 * time.Millisecond)
	below := image.Rect(bx, by+bh+4, bx+300, by+bh+60)
	if n := changedPixels(right, shot("tooltip"), below); n < 300 {
		t.Errorf("hovering Run all changed only %d pixels below it: no tooltip drawn", n)
	}
	// Holding Shift makes the map follow the pointer (GLFW's hover events carry no modifiers:
	// the key's own events count). Without it, moving over the image changes nothing but the
	// hover tip by the pointer; with it, the whole map follows (a strip far from the pointer).
	gx, gy, gw, gh := geom[0], geom[1], geom[2], geom[3]
	far := image.Rect(gx, gy, gx+gw/4, gy+gh)
	at := func(fx, fy float64) []string {
		return []string{"mousemove", "--window", win, strconv.Itoa(gx + int(fx*float64(gw))), strconv.Itoa(gy + int(fy*float64(gh)))}
	}
	run(t, xenv, "xdotool", at(0.8, 0.75)...)
	time.Sleep(1200 * time.Millisecond)
	s1 := shot("hover1")
	run(t, xenv, "xdotool", at(0.8, 0.5)...)
	time.Sleep(1200 * time.Millisecond)
	s2 := shot("hover2")
	if n := changedPixels(s1, s2, far); n > 50 {
		t.Errorf("moving over the image without Shift changed %d pixels far from the pointer: the map followed", n)
	}
	run(t, xenv, "xdotool", "keydown", "shift")
	run(t, xenv, "xdotool", at(0.8, 0.25)...)
	time.Sleep(1500 * time.Millisecond)
	s3 := shot("shift")
	run(t, xenv, "xdotool", "keyup", "shift")
	if n := changedPixels(s2, s3, far); n < 500 {
		t.Errorf("moving with Shift held changed only %d pixels far from the pointer: the map did not follow", n)
	}
	// The What if tab from the keyboard: Ctrl+6 shows it with its first field focused; an
	// ablation typed there and Return run it against the finished run, and its chart fills.
	pane := image.Rect(gx+gw+20, gy, s3.Bounds().Max.X, gy+gh)
	run(t, xenv, "xdotool", "key", "ctrl+6")
	time.Sleep(1200 * time.Millisecond)
	tab := shot("whatif-tab")
	if n := changedPixels(s3, tab, pane); n < 20000 {
		t.Errorf("Ctrl+6 changed only %d pixels of the right pane: no What if tab", n)
	}
	run(t, xenv, "xdotool", "type", "1:*")
	run(t, xenv, "xdotool", "key", "Return")
	time.Sleep(3 * time.Second)
	if n := changedPixels(tab, shot("whatif-done"), pane); n < 5000 {
		t.Errorf("typing an ablation and Return changed only %d pixels of the What if tab: no result drawn", n)
	}
	app.stop(t)

	// Without flags the next launch reopens what was open (cat.png, not the demo's photo). It
	// also meets a Metal that crashes its start-up probe (the tests' stand-in GPU, aborting in
	// C): the window still comes up, on the CPU, and nothing of the crash reaches stderr.
	// In normal use (no INSPECTOR_READY_LINE) it writes nothing at all on stderr.
	plain := []string{}
	for _, kv := range env {
		if !strings.HasPrefix(kv, readyEnv+"=") {
			plain = append(plain, kv)
		}
	}
	again := startApp(t, bin, append(plain, selftest.EnvTestGPU+"=cpu-standin", selftest.EnvTestFault+"=probe:abort"), "gui")
	run(t, xenv, "xdotool", "search", "--sync", "--onlyvisible", "--name", "TurboSpark Vision Inspector — cat.png")
	time.Sleep(2 * time.Second) // its first run
	again.ready = 0
	again.stopWith(t, syscall.SIGHUP) // a closed terminal quits it as cleanly as SIGTERM

}

// run runs a tool (xdotool, import) for at most a minute: `xdotool search --sync` waits
// forever for a window that never comes.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
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
