package main

// interrupt_test.go: Ctrl-C stops a run within an op, whatever the page (the attention half
// checks its context per query tile), and says so; a second Ctrl-C exits at once. The page
// here is 16,384 patches of the demo: one block's attention alone takes seconds, and the
// whole run minutes, so an exit within the bound is the cancel's doing.

import (
	"bufio"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/internal/fsx"
)

// bigPage writes a 2048x2048 PNG: 16,384 patches with --max-pixels 4194304.
func bigPage(t *testing.T) string { return gradientPNG(t, 2048, 2048) }

// gradientPNG writes a w x h PNG of gradients (fast to encode, slow enough to decode).
func gradientPNG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := img.PixOffset(x, y)
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = uint8(x), uint8(y), uint8(x^y), 255
		}
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("page-%dx%d.png", w, h))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(f, img); err != nil {
		t.Fatal(err)
	}
	return path
}

// startBigRun starts `run` on the big page and returns once the first line of its block
// table is out (the session is open, block 0 is running).
func startBigRun(t *testing.T) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	bin, page := buildInspector(t), bigPage(t)
	// The CPU, pinned: the bound is the CPU engine's (a cancel lands within an op); on a Mac the
	// default would be Metal, whose cancel waits for the pass in flight.
	cmd := exec.Command(bin, "run", "--checkpoint", "../assets/demo", "--image", page, "--max-pixels", "4194304", "--threads", "2", "--backend", cpu.Name)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "block") {
			go func() {
				for sc.Scan() {
				}
			}()
			time.Sleep(300 * time.Millisecond) // into block 0's attention
			return cmd, &stderr
		}
	}
	t.Fatalf("the run ended before its table: %s", stderr.String())
	return nil, nil
}

// waitExit waits at most limit for cmd to end and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("the run did not end within %v of Ctrl-C", limit)
		return -1
	}
}

func TestInterruptStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 16,384-patch run")
	}
	for _, c := range []struct {
		sig   syscall.Signal
		says  string
		limit time.Duration
	}{
		// Within an op: a second on an idle machine; the bound leaves room for a loaded one.
		{syscall.SIGINT, "interrupted: stopping", 5 * time.Second},
		// The same cancel: what these show is that they are handled like Ctrl-C, not killed.
		{syscall.SIGTERM, "terminated (SIGTERM): stopping", 20 * time.Second},
		{syscall.SIGHUP, "hung up (SIGHUP): stopping", 20 * time.Second},
	} {
		cmd, stderr := startBigRun(t)
		sent := time.Now()
		cmd.Process.Signal(c.sig)
		rc := waitExit(t, cmd, c.limit)
		t.Logf("%v: ended %v after the signal", c.sig, time.Since(sent))
		msg := stderr.String()
		if rc == 0 || !strings.Contains(msg, c.says) || !strings.Contains(msg, "cancelled after 0 of 4 blocks (block 0 did not finish); no output written") {
			t.Errorf("%v: exit %d, stderr %q (want a failure that says it was stopped and cancelled)", c.sig, rc, msg)
		}
	}
}

// A signal while the outputs are written lets the write finish and says so; a second one
// quits at once and leaves no temporary behind (the target as it was). The writer here is
// this test binary writing through fsx in interruptible("run"), slowly.
func TestSignalDuringTheWrite(t *testing.T) {
	if target := os.Getenv("TS_WRITE_HELPER"); target != "" {
		ctx := interruptible("run")
		defer ctx.Stop()
		ctx.Writing(target)
		a, err := fsx.Create(target)
		if err != nil {
			os.Exit(3)
		}
		a.Write([]byte("new, first half;"))
		os.Stderr.WriteString("ready\n")
		time.Sleep(time.Second) // the signal comes now
		if os.Getenv("TS_WRITE_SLOW") != "" {
			time.Sleep(time.Minute)
		}
		a.Write([]byte(" second half"))
		if err := a.Commit(); err != nil {
			os.Exit(4)
		}
		os.Exit(0)
	}
	for _, c := range []struct {
		name    string
		signals []syscall.Signal
		rc      int
		content string
	}{
		{"one", []syscall.Signal{syscall.SIGTERM}, 0, "new, first half; second half"},
		{"two", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, 130, "old"},
		{"two of TERM", []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}, 143, "old"},
	} {
		dir := t.TempDir()
		target := filepath.Join(dir, "dump.safetensors")
		os.WriteFile(target, []byte("old"), 0o644)
		cmd := exec.Command(os.Args[0], "-test.run=^TestSignalDuringTheWrite$")
		cmd.Env = append(os.Environ(), "TS_WRITE_HELPER="+target)
		if len(c.signals) > 1 {
			cmd.Env = append(cmd.Env, "TS_WRITE_SLOW=1")
		}
		sc, all := helperStderr(t, cmd)
		waitForLine(t, sc, "ready")
		for i, s := range c.signals {
			cmd.Process.Signal(s)
			if i == 0 {
				waitForLine(t, sc, "finishing the write of "+target)
			}
		}
		go func() {
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
			}
		}()
		if rc := waitExit(t, cmd, 5*time.Second); rc != c.rc {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, rc, c.rc, all.String())
		}
		if b, _ := os.ReadFile(target); string(b) != c.content {
			t.Errorf("%s: the target holds %q, want %q", c.name, b, c.content)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: left behind: %v", c.name, ents)
		}
	}
}

// helperStderr starts cmd with its stderr scanned line by line (all keeps what was read).
func helperStderr(t *testing.T, cmd *exec.Cmd) (*bufio.Scanner, *strings.Builder) {
	t.Helper()
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return bufio.NewScanner(errPipe), &strings.Builder{}
}

// waitForLine reads sc until a line holds what.
func waitForLine(t *testing.T, sc *bufio.Scanner, what string) {
	t.Helper()
	for sc.Scan() {
		if strings.Contains(sc.Text(), what) {
			return
		}
	}
	t.Fatalf("the helper ended before printing %q", what)
}

// A second Ctrl-C exits at once (130) while the first one's stop is still under way. The run
// here is this test binary in interruptible("run") with work that is slow to stop: a real run stops
// within milliseconds now, and two Ctrl-C sent closer than that can merge into one signal, so
// the second is sent only once the first has been taken ("stopping" on stderr).
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	if os.Getenv("TS_INTERRUPT_HELPER") == "1" {
		ctx := interruptible("run")
		defer ctx.Stop()
		os.Stderr.WriteString("ready\n")
		<-ctx.Done()
		time.Sleep(time.Minute) // stopping takes long
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondInterruptExitsAtOnce$")
	cmd.Env = append(os.Environ(), "TS_INTERRUPT_HELPER=1")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(errPipe)
	waitFor := func(what string) {
		for sc.Scan() {
			if strings.Contains(sc.Text(), what) {
				return
			}
		}
		t.Fatalf("the helper ended before printing %q", what)
	}
	waitFor("ready")
	cmd.Process.Signal(syscall.SIGINT)
	waitFor("stopping")
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	if rc := waitExit(t, cmd, 2*time.Second); rc != 130 {
		t.Errorf("a second Ctrl-C: exit %d, want 130", rc)
	}
}

// A signal that comes while the image opens (before the first block) stops the run even
// where SIGINT started ignored (a background job of a script): the command arms its signals
// before it opens anything.
func TestInterruptWhileOpening(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 24-megapixel image")
	}
	page := gradientPNG(t, 6000, 4000) // decoding and resizing it take ~0.5 s
	bin := buildInspector(t)
	cmd := exec.Command("sh", "-c", `trap '' INT; exec "$0" run --checkpoint ../assets/demo --image "$1" --max-pixels 3136 --quiet --backend cpu`, bin, page)
	stderr := &lockedBuilder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	// Inside the image's decoding. A signal that comes before the command armed its signals is
	// ignored (SIGINT started ignored), as it would be for the user: the first is sent 150 ms
	// in, and again every 100 ms until one is taken ("stopping"), so a slow start (a Mac loads
	// its frameworks first) still meets the window the test is about.
	stop := make(chan struct{})
	go func() {
		for wait := 150 * time.Millisecond; ; wait = 100 * time.Millisecond {
			select {
			case <-stop:
				return
			case <-time.After(wait):
			}
			if strings.Contains(stderr.String(), "stopping") {
				return
			}
			cmd.Process.Signal(syscall.SIGINT)
		}
	}()
	rc := waitExit(t, cmd, 10*time.Second)
	close(stop)
	if out := stderr.String(); rc == 0 || !strings.Contains(out, "interrupted: stopping") || strings.Contains(out, "quitting now") {
		t.Errorf("Ctrl-C while the image opened: exit %d, stderr %q (want the run stopped by one signal)", rc, out)
	}
}

// lockedBuilder is a strings.Builder a process writes while a test reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Ctrl-C while an activation patch's source image runs (inside the session's opening, before
// block 0) stops it within moments and says so. The source is 65,536 patches: its blocks run
// minutes on 2 threads here, tens of seconds on the fastest core, so the signal lands in them
// (or in the pages' decoding before them: the same message) on any machine.
func TestCtrlCWhileThePatchSourceRuns(t *testing.T) {
	bin, page := buildInspector(t), gradientPNG(t, 4096, 4096)
	cmd := exec.Command(bin, "run", "--checkpoint", "../assets/demo", "--image", page, "--max-pixels", "16777216", "--threads", "2",
		"--backend", cpu.Name, "--quiet", "--patch-from", page+":blocks.3.out@0,0,8,8")
	stderr := &lockedBuilder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	time.Sleep(emulatedWait(2500 * time.Millisecond)) // both pages decoded; the source's blocks run
	cmd.Process.Signal(syscall.SIGINT)
	// As a plain run's (TestInterruptWhileOpening), the bound holds an image's decoding, which
	// does not stop part way; the source's blocks stop within an op.
	rc := waitExit(t, cmd, emulatedWait(10*time.Second))
	if out := stderr.String(); rc == 0 || !strings.Contains(out, "interrupted before block 0 (while the --patch-from image ran)") {
		t.Errorf("exit %d, stderr %q", rc, out)
	}
}

// emulatedWait is d, longer under qemu-user.
func emulatedWait(d time.Duration) time.Duration {
	if os.Getenv("TS_EMULATED") != "" {
		return 10 * d
	}
	return d
}
