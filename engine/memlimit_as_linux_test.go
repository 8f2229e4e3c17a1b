package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/synth"
	"golang.org/x/sys/unix"
)

// The child of TestAddressLimit: under RLIMIT_AS set just above what it maps, a page past it
// is refused with the limit named and what it would need; the largest page the check lets
// through runs to the end (the budget's slack is enough: no "fatal error: out of memory");
// once it is closed a page nearly as large opens and runs.
const asChild = "TS_ENGINE_AS_CHILD"

func TestAddressLimit(t *testing.T) {
	if !inChild(t) {
		return
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := engine.OpenCheckpoint(fx.dir)
	must(t, err)
	const room = 320 << 20
	limit := limitAddressSpace(t, room)
	budget, why := guard.MemoryBudget(0)
	if !strings.Contains(why, "ulimit -v (RLIMIT_AS)") || budget <= 0 || budget > room {
		t.Fatalf("budget %d: %q", budget, why)
	}
	s := engine.Settings{Threads: 2, Keep: engine.Keep{Outputs: true}}
	// bench's page of 2^20 patches: refused before it is made.
	err = engine.CheckMemory(engine.EstimatePatches(ck, 1<<20, s), 0)
	if err == nil || !strings.Contains(err.Error(), "ulimit -v (RLIMIT_AS)") || !strings.Contains(err.Error(), "it would need ulimit -v ") {
		t.Fatalf("2^20 patches under %d bytes of room: %v", budget, err)
	}
	c := ck.Config
	m := c.MergeSize
	// The largest page the check lets through (its pixels well inside the room), run to the end.
	lo, hi := 1, 2
	for int64(4*hi*hi*c.PatchDim()*4) < budget/2 {
		hi++
	}
	// Every page's pixels are a prefix of one buffer, made once, while the heap is small: a
	// fresh make per probed page, with the last one's still unswept, once took the child past
	// its RLIMIT_AS in the test's own make ("fatal error: out of memory" before the engine saw
	// the page, ~1 run in 10 on a busy machine). The checks see the whole buffer mapped, as
	// they would see an image's pixels already decoded.
	pixels := make([]float32, hi*m*hi*m*c.PatchDim())
	page := func(side int) *engine.Input { // side x side merge groups
		g := geom.Grid{T: 1, H: side * m, W: side * m}
		return &engine.Input{Pixels: pixels[:g.Patches()*c.PatchDim()], Grids: []geom.Grid{g}}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		sess, err := engine.NewSession(context.Background(), ck, page(mid), fx.dir, "", s, cpuBackend())
		if err != nil {
			if !strings.Contains(err.Error(), "ulimit -v (RLIMIT_AS)") {
				t.Fatal(err)
			}
			hi = mid
			continue
		}
		sess.Close()
		lo = mid
	}
	// The check's view of the room moves a little between probes (what the probed sessions
	// left mapped: 1 run in 8 under load refused the bisection's own answer by ~10 MiB). So
	// the largest page it lets through now, within 5% of the bisection's, runs to the end.
	var sess *engine.Session
	for side := lo; sess == nil; side-- {
		if side < lo*95/100 {
			t.Fatalf("no page from %d merge groups a side down to %d opens", lo, side+1)
		}
		sess, err = engine.NewSession(context.Background(), ck, page(side), fx.dir, "", s, cpuBackend())
		if err != nil && !strings.Contains(err.Error(), "ulimit -v (RLIMIT_AS)") {
			t.Fatal(err)
		}
		lo = side
	}
	must(t, sess.RunAll(t.Context()))
	sess.Close()
	// Closed, its room is back (the heap's free pages count): a page of 90% of its patches
	// opens and runs (at 100% the heap's state after a run may leave a few KiB less).
	sess, err = engine.NewSession(context.Background(), ck, page(lo*95/100), fx.dir, "", s, cpuBackend())
	must(t, err)
	must(t, sess.RunAll(t.Context()))
	sess.Close()
	fmt.Printf("CHILD OK: ran %d patches under RLIMIT_AS %d MiB\n", 4*lo*lo, limit>>20)
}

// inChild runs the calling test again in a child process and checks that it printed CHILD OK
// and no fatal error (false: the caller returns); in the child it is true.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(asChild) != "" {
		return true
	}
	if runtime.GOOS != "linux" || os.Getenv("TS_EMULATED") != "" {
		t.Skip("RLIMIT_AS is Linux's, and qemu-user reserves the guest's address space up front")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), asChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("CHILD OK")) || bytes.Contains(out, []byte("fatal error")) {
		t.Fatalf("the child under RLIMIT_AS: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	return false
}

// limitAddressSpace sets this process's RLIMIT_AS to what it maps now and room more.
func limitAddressSpace(t *testing.T, room int64) uint64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	must(t, err)
	var vm int64
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmSize:" {
			vm, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	limit := uint64(vm<<10 + room)
	must(t, unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit}))
	return limit
}

// Under RLIMIT_AS, a wide tower (taps far larger than its pixels) keeping every tap, on half
// the largest page it could run without them: the probes take only their share of what is
// left, and the dump, which copies everything it writes, is written (no fatal error).
func TestAddressLimitDump(t *testing.T) {
	if !inChild(t) {
		return
	}
	dir := t.TempDir()
	cfg := engine.Config{ModelType: "qwen3_5", Depth: 2, Hidden: 512, Heads: 8, Intermediate: 2048, OutHidden: 256,
		InChannels: 3, PatchSize: 16, TemporalPatchSize: 2, MergeSize: 2, NumPositionEmbedding: 2304,
		HiddenAct: "gelu_pytorch_tanh", RopeTheta: 10000}
	must(t, synth.Write(dir, cfg, synth.Options{DType: dtype.BF16, Seed: 3}))
	ck, err := engine.OpenCheckpoint(dir)
	must(t, err)
	limit := limitAddressSpace(t, 320<<20)
	s := engine.Settings{Threads: 2, Keep: engine.Keep{Outputs: true}}
	page := func(side int) *engine.Input {
		g := geom.Grid{T: 1, H: side * 2, W: side * 2}
		return &engine.Input{Pixels: make([]float32, g.Patches()*cfg.PatchDim()), Grids: []geom.Grid{g}}
	}
	// The largest page without taps but out, by the estimate (nothing is allocated).
	side := 1
	for engine.CheckMemory(engine.EstimatePatches(ck, 4*(side+1)*(side+1), s), 0) == nil {
		side++
	}
	all := s
	all.Keep.Taps = engine.AllTaps
	sess, err := engine.NewSession(context.Background(), ck, page(side*7/10), dir, "", all, cpuBackend())
	must(t, err)
	must(t, sess.RunAll(t.Context()))
	kept := sess.Settings.Keep.Set()
	must(t, engine.WriteDump(sess.Run, filepath.Join(t.TempDir(), "dump.safetensors"), -1, kept))
	sess.Close()
	fmt.Printf("CHILD OK: %d patches under RLIMIT_AS %d MiB kept and dumped %v (%v)\n", 4*(side*7/10)*(side*7/10), limit>>20, kept, sess.Notes)
}

// Under RLIMIT_AS, an image whose decoding fits but whose page does not once the decoder's
// buffers have taken their share (a 16-bit PNG: 8 bytes a pixel decoded, garbage the page's
// 24 bytes a pixel cannot reuse in one piece) is refused before Preprocess allocates the page,
// naming the limit; the window died here at 2 GiB on a 4000x3000 16-bit PNG.
func TestAddressLimitImage(t *testing.T) {
	if !inChild(t) {
		return
	}
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	limit := limitAddressSpace(t, 320<<20)
	free, why := guard.MemoryBudget(0)
	side := int(math.Sqrt(float64(free) / 37)) // decoding (24 a pixel) fits; the page's 33 too, without the decoder's
	side -= side % 32
	img := image.NewNRGBA64(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			img.SetNRGBA64(x, y, color.NRGBA64{uint16(x * 977), uint16(y * 131), uint16(x * y), 0xffff})
		}
	}
	path := filepath.Join(t.TempDir(), "big.png")
	f, err := os.Create(path)
	must(t, err)
	must(t, png.Encode(f, img))
	must(t, f.Close())
	img = nil
	s := engine.Settings{Threads: 2, MaxPixels: 4 * side * side}
	_, err = engine.OpenSession(context.Background(), fx.dir, path, s, cpuBackend())
	if err == nil || !strings.Contains(err.Error(), "whose preprocessing would hold") || !strings.Contains(err.Error(), "ulimit -v (RLIMIT_AS)") {
		t.Fatalf("%dx%d under %s: %v, want it refused before Preprocess makes the page", side, side, why, err)
	}
	fmt.Printf("CHILD OK: a %dx%d 16-bit PNG under RLIMIT_AS %d MiB: %v\n", side, side, limit>>20, err)
}
