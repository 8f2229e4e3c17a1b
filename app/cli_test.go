package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/metal"
	"github.com/turbospark/inspector/selftest"
	"github.com/turbospark/inspector/ui"
)

func cliFails(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if rc := realMain(args, &out, &errb); rc == 0 {
		t.Fatalf("inspector %s succeeded; want an error", strings.Join(args, " "))
	}
	return errb.String()
}

// gen writes a checkpoint verify accepts and run can run, in every dtype.
func TestGenVerifyRun(t *testing.T) {
	for _, dt := range []string{"f16", "bf16"} {
		dir := filepath.Join(t.TempDir(), "ck")
		cli(t, "gen", "--preset", "tiny-qwen3.5", "--dtype", dt, "--out", dir, "--seed", "5")
		out := cli(t, "verify", "--checkpoint", dir)
		for _, want := range []string{"qwen3_5", "2 blocks, hidden 144, 2 heads x 72", "deepstack: none", strings.ToUpper(dt) + " x", "model.visual."} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: verify output lacks %q:\n%s", dt, want, out)
			}
		}
		cli(t, "run", "--checkpoint", dir, "--image", "testdata/e2e/cat.png", "--quiet")
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "notanimage.png")
	if err := os.WriteFile(bad, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"gen", "--preset", "gpt-9", "--out", dir}, `unknown preset "gpt-9"`},
		{[]string{"gen", "--preset", "tiny", "--dtype", "int4", "--out", dir}, `dtype "int4"`},
		{[]string{"verify", "--checkpoint", dir}, "config.json"},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", bad, "--quiet"}, "notanimage.png: cannot decode image"},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", filepath.Join(dir, "missing.png")}, "missing.png"},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--residency", "swap"}, `residency "swap"`},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--tile", "-1"}, "--tile -1"},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--attention-query", "504",
			"--dump", filepath.Join(dir, "d.safetensors"), "--quiet"}, "has 504 patches"},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--dump", filepath.Join(dir, "d.safetensors"),
			"--taps", "ln1,bogus"}, `--taps: unknown tap "bogus": the taps are ln1, q, k, v, attn, attn_proj, ffn_in, ln2, ffn_act, ffn_out, out (or all)`},
		{[]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--taps", "ln1"}, "written by --dump"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		if msg := cliFails(t, c.args...); !strings.Contains(msg, c.want) {
			t.Errorf("%v: message %q lacks %q", c.args, msg, c.want)
		}
	}
}

// An image whose header declares more pixels than the bound is refused before decoding:
// this PNG has a valid signature and IHDR (100000 x 100000) and no pixel data at all.
func TestHugeImageRefused(t *testing.T) {
	ihdr := []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0, 8, 2, 0, 0, 0}
	png := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	chunk := append([]byte("IHDR"), ihdr...)
	png = append(png, chunk...)
	png = binary.BigEndian.AppendUint32(png, crc32.ChecksumIEEE(chunk))
	path := filepath.Join(t.TempDir(), "huge.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	msg := cliFails(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", path)
	if !strings.Contains(msg, "huge.png") || !strings.Contains(msg, "100000x100000") {
		t.Errorf("message %q", msg)
	}
}

// --backend metal says plainly, off macOS, that Metal needs macOS.
func TestMetalBackendOffMacOS(t *testing.T) {
	if metalOnThisMachine() {
		t.Skip("Metal (or the tests' stand-in GPU) runs here (metal/metal_darwin_test.go, selftest/probe_test.go)")
	}
	msg := cliFails(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--backend", metal.Name)
	if !strings.Contains(msg, "Metal backend needs macOS") {
		t.Errorf("message %q", msg)
	}
}

// The window offers Metal, first, exactly where the probe and metal.Check passed (metalOK:
// on a Mac, or the tests' stand-in GPU); elsewhere it says why not; auto runs on Metal there
// and on the CPU here.
func TestBackendChoice(t *testing.T) {
	b := ui.MachineBackends()
	name, note, err := backend.Resolve(backend.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if checkErr := backend.Available(metal.Name); checkErr == nil {
		if b.Default() != metal.Name || !b.Offers(cpu.Name) || name != metal.Name {
			t.Errorf("Metal runs here, but the window offers %v and auto picks %q", b.Names, name)
		}
		if a, c := b.ComparePair(); a.Backend != cpu.Name || c.Backend != metal.Name {
			t.Errorf("Compare starts with %s vs %s, want cpu vs metal", a.Backend, c.Backend)
		}
	} else {
		if b.Offers(metal.Name) || b.Default() != cpu.Name || name != cpu.Name {
			t.Errorf("Metal does not run here (%v), but the window offers %v and auto picks %q", checkErr, b.Names, name)
		}
		if b.Unavailable[metal.Name] != checkErr.Error() {
			t.Errorf("the window says %q about Metal, want the check's reason %q", b.Unavailable[metal.Name], checkErr)
		}
		if selftest.MetalExpected() != (note != "") {
			t.Errorf("auto's note %q: a Mac without Metal must say why, elsewhere the CPU is simply the engine", note)
		}
	}
	if _, _, err := backend.Resolve("cuda"); err == nil || !strings.Contains(err.Error(), "want auto, cpu or metal") {
		t.Errorf("--backend cuda: %v", err)
	}
}

// Without a display the window refuses with a message, not GLFW's panic.
func TestGUIWithoutDisplay(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("display detection is for X11/Wayland")
	}
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	if msg := cliFails(t); !strings.Contains(msg, "no display") {
		t.Errorf("message %q", msg)
	}
}

// run --dump --taps writes blocks.{i}.{tap} for the taps asked, at their widths, next to the
// dump contract's tensors, which do not change.
func TestRunDumpTaps(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, extra ...string) map[string][]float32 {
		path := filepath.Join(dir, name)
		cli(t, append([]string{"run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--dump", path, "--quiet"}, extra...)...)
		f, m := readAll(t, path)
		for name, info := range f.Tensors {
			if strings.HasPrefix(name, "blocks.") && len(info.Shape) == 2 {
				m[name+".shape"] = []float32{float32(info.Shape[0]), float32(info.Shape[1])}
			}
		}
		return m
	}
	plain := run("plain.safetensors")
	some := run("some.safetensors", "--taps", "ln1,ffn_act")
	all := run("all.safetensors", "--taps", "all")
	const S, D, I = 504, 64, 128
	for i := range 4 {
		for _, c := range []struct {
			tap   string
			width int
			in    map[string][]float32
		}{{"ln1", D, some}, {"ffn_act", I, some}, {"q", D, all}, {"ffn_out", D, all}, {"ffn_act", I, all}} {
			key := fmt.Sprintf("blocks.%d.%s", i, c.tap)
			if sh := c.in[key+".shape"]; len(sh) != 2 || sh[0] != S || sh[1] != float32(c.width) {
				t.Errorf("%s: shape %v, want [%d %d]", key, sh, S, c.width)
			}
		}
		out := fmt.Sprintf("blocks.%d.out", i)
		if !numcheck.BitEqual(plain[out], some[out]) || !numcheck.BitEqual(plain[out], all[out]) {
			t.Errorf("%s changes with --taps", out)
		}
		if _, ok := plain[fmt.Sprintf("blocks.%d.ln1", i)]; ok {
			t.Errorf("block %d: ln1 dumped without --taps", i)
		}
		if _, ok := some[fmt.Sprintf("blocks.%d.v", i)]; ok {
			t.Errorf("block %d: v dumped with --taps ln1,ffn_act", i)
		}
	}
	// out = ffn_in + ffn_out, as float32 adds: the taps are the block's own values.
	for i := range 4 {
		in, fo, out := all[fmt.Sprintf("blocks.%d.ffn_in", i)], all[fmt.Sprintf("blocks.%d.ffn_out", i)], all[fmt.Sprintf("blocks.%d.out", i)]
		for j := range out {
			if in[j]+fo[j] != out[j] {
				t.Fatalf("block %d value %d: ffn_in + ffn_out = %v, out %v", i, j, in[j]+fo[j], out[j])
			}
		}
	}
}
