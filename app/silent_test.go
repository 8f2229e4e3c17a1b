package main

// silent_test.go: nothing silently wrong. A sweep or a Compare of a checkpoint whose values go
// non-finite names where, as run does, and its JSON says so (valid JSON: a NaN or an unbounded
// interval is null); an empty intervention list is refused, not run as none; a 16-bit gray
// image's note reaches stderr (also --quiet) and the JSON; a long value is quoted short.

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
)

// runCLI runs args in this process and returns the exit code, stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := realMain(args, &out, &errb)
	return rc, out.String(), errb.String()
}

// jsonOf reads path as JSON (strictly: encoding/json refuses NaN and Inf tokens).
func jsonOf(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not JSON: %v\n%.400s", path, err, b)
	}
	return m
}

const poisonedTensor = "blocks.1.attn.qkv.bias"

func TestSweepNamesNonFiniteValues(t *testing.T) {
	dir := poisoned(t, poisonedTensor)
	out := filepath.Join(t.TempDir(), "sweep.json")
	rc, _, stderr := runCLI("sweep", "--checkpoint", dir, "--image", "testdata/e2e/cat.png", "--over", "blocks", "--backend", cpu.Name, "--out", out)
	if rc != 0 || !strings.Contains(stderr, "warning: values stopped being finite") || !strings.Contains(stderr, poisonedTensor) {
		t.Fatalf("exit %d, stderr %q: want the warning naming %s", rc, stderr, poisonedTensor)
	}
	m := jsonOf(t, out)
	nf, _ := m["non_finite"].(map[string]any)
	if nf == nil || nf["block"] != 1.0 {
		t.Errorf("the JSON's non_finite: %v", m["non_finite"])
	}
	rows, _ := m["rows"].([]any)
	if len(rows) == 0 {
		t.Fatalf("no rows: %v", m)
	}
	if r := rows[len(rows)-1].(map[string]any); r["merger_rel_change"] != nil {
		t.Errorf("a change against a NaN run reads %v, want null", r["merger_rel_change"])
	}
}

func TestCompareNamesNonFiniteSides(t *testing.T) {
	dir := poisoned(t, poisonedTensor)
	out := filepath.Join(t.TempDir(), "cmp.json")
	rc, stdout, stderr := runCLI("compare", "--checkpoint", dir, "--image", "testdata/e2e/cat.png", "--reps", "1",
		"--a", "backend=cpu", "--b", "backend=cpu,tile=64", "--json", out)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr)
	}
	if !strings.Contains(stderr, "warning: side A's values stopped being finite") || !strings.Contains(stdout, "outputs: not compared: side A's") ||
		strings.Contains(stdout, "outputs: identical") || strings.Contains(stdout, "differ by at most") {
		t.Errorf("stdout:\n%s\nstderr: %q", stdout, stderr)
	}
	c := jsonOf(t, out)["comparison"].(map[string]any)
	if c["non_finite_a"] == nil || c["non_finite_b"] == nil {
		t.Errorf("the JSON does not name the non-finite sides: %v %v", c["non_finite_a"], c["non_finite_b"])
	}
}

// One pair of passes has no interval: the JSON holds null for its upper bound and says why,
// and the summary says so instead of "0.000-+Inf".
func TestCompareOfOnePairWritesJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cmp.json")
	rc, stdout, stderr := runCLI("compare", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--reps", "1",
		"--a", "backend=cpu", "--b", "backend=cpu", "--json", out)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr)
	}
	c := jsonOf(t, out)["comparison"].(map[string]any)
	if c["ratio_high"] != nil || !strings.Contains(c["interval_note"].(string), "one pair") {
		t.Errorf("ratio_high %v, interval_note %v", c["ratio_high"], c["interval_note"])
	}
	if strings.Contains(stdout, "Inf") || !strings.Contains(stdout, "one pair of passes gives no interval") {
		t.Errorf("summary:\n%s", stdout)
	}
}

func TestEmptyInterventionListsRefused(t *testing.T) {
	base := []string{"--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--backend", cpu.Name, "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"run", "--ablate", ","}, base...), "--ablate"},
		{append([]string{"run", "--ablate", " + "}, base...), "no BLOCK:HEAD pair"},
		{append([]string{"run", "--mask-patches", ","}, base...), "--mask-patches"},
		{append([]string{"run", "--mask-keys", ","}, base...), "--mask-keys"},
		{append([]string{"run", "--keep-top", ","}, base...), "--keep-top"},
		{[]string{"compare", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--b", "ablate="}, "--b ablate=: no value"},
		{[]string{"compare", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--a", "mask="}, "--a mask=: no value"},
		{[]string{"compare", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--b", "tile=64,ablate=,"}, "--b ablate=: no value"},
	} {
		if rc, _, stderr := runCLI(c.args...); rc == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want a refusal saying %q", c.args, rc, stderr, c.want)
		}
	}
}

// gray16PNG writes a 16-bit grayscale PNG with samples from 256 up (which PIL clips).
func gray16PNG(t *testing.T) string {
	img := image.NewGray16(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			img.SetGray16(x, y, color.Gray16{Y: uint16(300 * (x + y))})
		}
	}
	path := filepath.Join(t.TempDir(), "gray16.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGray16NoteIsSaid(t *testing.T) {
	page := gray16PNG(t)
	js := filepath.Join(t.TempDir(), "r.json")
	rc, _, stderr := runCLI("run", "--checkpoint", "testdata/e2e/tiny", "--image", page, "--backend", cpu.Name, "--quiet", "--json", js)
	if rc != 0 || !strings.Contains(stderr, "note: a 16-bit gray image") || !strings.Contains(stderr, "transformers would see another image") {
		t.Errorf("exit %d, stderr %q: want the 16-bit note", rc, stderr)
	}
	notes, _ := jsonOf(t, js)["notes"].([]any)
	if len(notes) == 0 || !strings.Contains(notes[0].(string), "16-bit gray") {
		t.Errorf("the JSON's notes: %v", notes)
	}
	_, stdout, _ := runCLI("run", "--checkpoint", "testdata/e2e/tiny", "--image", page, "--backend", cpu.Name)
	if !strings.Contains(stdout, "note: a 16-bit gray image") {
		t.Errorf("the table does not say it:\n%s", stdout)
	}
}

// A long value — a 16 MB binary file given as a mask, a megabyte typed into a flag — is
// quoted short in the error, which still names the file or the flag.
func TestLongValuesQuotedShort(t *testing.T) {
	blob := filepath.Join(t.TempDir(), "blob.bin")
	data := make([]byte, 16<<20)
	for i := range data {
		data[i] = byte(i*131 + 7)
	}
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("7", 1<<20)
	base := []string{"--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--backend", cpu.Name, "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"run", "--mask-patches", blob}, base...), blob},
		{append([]string{"run", "--mask-keys", blob + "@1"}, base...), blob},
		{append([]string{"run", "--ablate", long}, base...), "--ablate"},
		{append([]string{"run", "--keep-top", long}, base...), "--keep-top"},
		{append([]string{"run", "--taps", long}, base...), "--taps"},
		{append([]string{"run", "--patch-from", long + ":blocks.1.out@0,0,1,1"}, base...), "--patch-from"},
		{[]string{"compare", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--b", long}, "--b"},
		{append([]string{"run", "--max-memory", long}, base...), "--max-memory"},
	} {
		rc, _, stderr := runCLI(c.args...)
		if rc == 0 || len(stderr) > 2000 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %d bytes of stderr (want a short refusal naming %s): %.300q", c.args[1], rc, len(stderr), c.want, stderr)
		}
	}
	// The flag package's own message (a number flag given a megabyte) is cut too.
	bin := buildInspectorTags(t, "")
	cmd := exec.Command(bin, append([]string{"run", "--tile", long[:100<<10]}, base...)...) // an argument holds 128 KiB at most
	out, err := cmd.CombinedOutput()
	if err == nil || len(out) > 8000 || !strings.Contains(string(out), "-tile") {
		t.Errorf("--tile with a megabyte: %v, %d bytes: %.300q", err, len(out), out)
	}
}

func TestPatchFromWithoutPatches(t *testing.T) {
	rc, _, stderr := runCLI("run", "--checkpoint", "testdata/e2e/tiny", "--image", "testdata/e2e/cat.png", "--backend", cpu.Name, "--quiet",
		"--patch-from", "testdata/e2e/cat.png:blocks.1.out@")
	if rc == 0 || !strings.Contains(stderr, "no patches after @") || strings.Contains(stderr, "<nil>") {
		t.Errorf("exit %d, stderr %q", rc, stderr)
	}
}
