package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/internal/numcheck"
)

// The CLI end to end against transformers: image file -> PIL processor -> tower -> dump,
// compared tensor by tensor with scripts/make_fixtures.py e2e output.

func cli(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if rc := realMain(args, &out, &errb); rc != 0 {
		t.Fatalf("inspector %s: exit %d: %s", strings.Join(args, " "), rc, errb.String())
	}
	return out.String()
}

func readAll(t *testing.T, path string) (*safetensors.File, map[string][]float32) {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]float32{}
	for name, ti := range f.Tensors {
		if ti.DType == dtype.I64 {
			continue
		}
		if m[name], err = f.ReadF32(name); err != nil {
			t.Fatal(err)
		}
	}
	return f, m
}

func grid(t *testing.T, f *safetensors.File, name string) []int64 {
	g, err := f.ReadI64(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// dumpAgainst runs the CLI with --dump for one query and returns dump and fixture tensors.
func dumpAgainst(t *testing.T, ckpt, image, fixture string, query int, extra ...string) (map[string][]float32, map[string][]float32) {
	dump := filepath.Join(t.TempDir(), "dump.safetensors")
	args := append([]string{"run", "--checkpoint", ckpt, "--image", image, "--dump", dump,
		"--attention-query", fmt.Sprint(query), "--quiet"}, extra...)
	cli(t, args...)
	df, got := readAll(t, dump)
	rf, ref := readAll(t, fixture)
	if g, r := grid(t, df, "grid_thw"), grid(t, rf, "grid_thw"); fmt.Sprint(g) != fmt.Sprint(r) {
		t.Fatalf("grid_thw %v, transformers %v", g, r)
	}
	for name := range ref {
		if strings.HasPrefix(name, fmt.Sprintf("q%d.", query)) {
			ref[strings.TrimPrefix(name, fmt.Sprintf("q%d.", query))] = ref[name]
		}
	}
	return got, ref
}

func TestRunDumpMatchesTransformers(t *testing.T) {
	const fixture = "testdata/e2e/e2e_tiny_cat.safetensors"
	for _, q := range []int{0, 77, 503} {
		got, ref := dumpAgainst(t, "testdata/e2e/tiny", "testdata/e2e/cat.png", fixture, q)
		if d := numcheck.MaxAbs(got["pixel_values"], ref["pixel_values"]); d > 1e-6 {
			t.Errorf("pixel_values differ by %.2e from the PIL processor", d)
		}
		names := []string{"embed", "merger", "deepstack.0", "deepstack.1"}
		for i := 0; i < 4; i++ {
			names = append(names, fmt.Sprintf("blocks.%d.out", i), fmt.Sprintf("blocks.%d.attn_row", i))
		}
		for _, n := range names {
			if ref[n] == nil || got[n] == nil {
				t.Fatalf("query %d: %s missing (dump has it: %v, fixture: %v)", q, n, got[n] != nil, ref[n] != nil)
			}
			e := numcheck.RelErr(got[n], ref[n])
			if q == 77 {
				t.Logf("%-18s rel %.2e", n, e)
			}
			if e > 1e-5 {
				t.Errorf("query %d: %s relative error %.2e > 1e-5", q, n, e)
			}
		}
		if _, extra := got["deepstack.2"]; extra {
			t.Error("dump has a third deepstack output")
		}
	}
}

// Qwen3.5 (head_dim 72, no deepstack) on a JPEG stored rotated with EXIF orientation 6.
// Go's JPEG decoder is not libjpeg: decoded levels differ by a step or two, so pixels get a
// tolerance; the grid (18x28, not 28x18) shows the orientation was applied.
func TestRunDumpExifJPEGQwen35(t *testing.T) {
	got, ref := dumpAgainst(t, "testdata/e2e/tiny-qwen3.5", "testdata/e2e/cat_exif6.jpg",
		"testdata/e2e/e2e_qwen35_catexif6.safetensors", 300)
	var mean float64
	for i, r := range ref["pixel_values"] {
		mean += math.Abs(float64(got["pixel_values"][i] - r))
	}
	mean /= float64(len(ref["pixel_values"]))
	if d := numcheck.MaxAbs(got["pixel_values"], ref["pixel_values"]); d > 0.05 || mean > 0.003 {
		t.Errorf("pixel_values: max %.3f mean %.4f from PIL's decode", d, mean)
	}
	t.Logf("jpeg pixel_values: max %.4f mean %.5f", numcheck.MaxAbs(got["pixel_values"], ref["pixel_values"]), mean)
	for _, n := range []string{"blocks.0.out", "blocks.1.out", "merger", "blocks.1.attn_row"} {
		e := numcheck.RelErr(got[n], ref[n])
		t.Logf("%-18s rel %.2e", n, e)
		if e > 0.03 {
			t.Errorf("%s: relative error %.3f", n, e)
		}
	}
	if _, ok := got["deepstack.0"]; ok {
		t.Error("a Qwen3.5 dump has deepstack outputs")
	}
}

// --json holds settings, per-block timings, totals, bytes read and peak memory.
func TestRunJSON(t *testing.T) {
	js := filepath.Join(t.TempDir(), "run.json")
	out := cli(t, "run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png",
		"--residency", "pread", "--tile", "100", "--threads", "1", "--backend", cpu.Name, "--json", js) // the CPU: its thread count is reported
	for _, want := range []string{"block", "total", "peak RSS"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var rep engine.Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	s := rep.Settings
	if s.Residency != "pread" || s.TileRows != 100 || s.Threads != 1 || s.Patches != 504 || len(rep.Blocks) != 4 {
		t.Errorf("settings %+v, %d blocks", s, len(rep.Blocks))
	}
	var read int64
	for _, b := range rep.Blocks {
		if b.AttentionMS <= 0 || b.MLPMS <= 0 || b.BytesRead <= 0 {
			t.Errorf("block %+v", b)
		}
		read += b.BytesRead
	}
	if read != rep.Totals.BytesRead || rep.PeakRSS <= 0 || rep.Totals.WeightBytes <= read {
		t.Errorf("totals %+v, peak %d", rep.Totals, rep.PeakRSS)
	}
}
