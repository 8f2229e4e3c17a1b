package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/internal/numcheck"
	"github.com/turbospark/inspector/internal/testfixture"
)

// inspector compare of identical settings, while every core is kept busy by another load,
// reads "within noise"; its JSON holds every pass of both sides, the ratio's interval, the
// verdict and the largest output difference (0).
func TestCompareCLIUnderLoad(t *testing.T) {
	var stop atomic.Bool
	defer stop.Store(true)
	for range runtime.NumCPU() { // the background load
		go func() {
			x := 1.0
			for !stop.Load() {
				for i := 0; i < 1e5; i++ {
					x = x*1.0000001 + 1e-9
				}
			}
			_ = x
		}()
	}
	js := filepath.Join(t.TempDir(), "cmp.json")
	out := cli(t, "compare", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--a", "tile=512,threads=2",
		"--b", "tile=512,threads=2", "--reps", "4", "--blocks", "3", "--json", js)
	if !strings.Contains(out, "no difference (identical settings") || !strings.Contains(out, "outputs: identical") {
		t.Errorf("identical settings under load:\n%s", out)
	}
	var got struct {
		Patches    int `json:"patches"`
		Comparison struct {
			A, B struct {
				Passes []struct {
					BlockS []float64 `json:"block_s"`
					TotalS float64   `json:"total_s"`
				} `json:"passes"`
			}
			Reps          int      `json:"reps"`
			RatioLow      *float64 `json:"ratio_low"`
			RatioHigh     *float64 `json:"ratio_high"`
			Verdict       string   `json:"verdict"`
			MaxOutputDiff *float64 `json:"max_output_diff"`
		} `json:"comparison"`
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("the JSON: %v\n%s", err, b)
	}
	c := got.Comparison
	if c.Reps != 4 || len(c.A.Passes) != 4 || len(c.B.Passes) != 4 || len(c.A.Passes[0].BlockS) != 3 || c.Verdict != "within noise" ||
		c.RatioLow == nil || c.RatioHigh == nil || c.MaxOutputDiff == nil || *c.MaxOutputDiff != 0 || got.Patches == 0 {
		t.Errorf("the JSON: %s", b)
	}
}

func TestCompareCLIFlags(t *testing.T) {
	base := []string{"compare", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--a", "tile=x"}, "--a tile=x: want a whole number"},
		{[]string{"--b", "colour=red"}, `--b: unknown setting "colour"`},
		{[]string{"--a", "tile"}, "want key=value pairs"},
		{[]string{"--a", "max-pixels=50000"}, "both sides run one page"},
		{[]string{"--a", "max-pixels=1023", "--b", "max-pixels=1023"}, "--a max-pixels 1023: want 1024 to"},
		{[]string{"--reps", "0"}, "--reps 0"},
		{[]string{"--json", "../assets/demo/x.json"}, "a folder the run reads"},
	} {
		if msg := cliFails(t, append(base, c.args...)...); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.args, msg, c.want)
		}
	}
}

// Head ablation on the CLI: run's --ablate/--ablate-mode reach the run (the header and the
// JSON name them, the dump's merger moves), bad values are refused naming the flag, and
// compare takes it as a setting of one side (pairs joined by +) and reports the outputs apart.
func TestAblateCLI(t *testing.T) {
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	dir := t.TempDir()
	plain, abl := filepath.Join(dir, "plain.safetensors"), filepath.Join(dir, "abl.safetensors")
	js := filepath.Join(dir, "abl.json")
	cli(t, append(base, "--quiet", "--dump", plain)...)
	out := cli(t, append(base, "--dump", abl, "--json", js, "--ablate", "1:*,2:0", "--ablate-mode", "mean")...)
	if !strings.Contains(out, "intervention: ablate 1:*,2:0 (mean)") {
		t.Errorf("the run's header does not name the ablation:\n%s", out)
	}
	var rep struct {
		Settings struct {
			Ablate     string `json:"ablate"`
			AblateMode string `json:"ablate_mode"`
		} `json:"settings"`
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Settings.Ablate != "1:*,2:0" || rep.Settings.AblateMode != "mean" {
		t.Errorf("--json settings %+v (%v)", rep.Settings, err)
	}
	_, p := readAll(t, plain)
	_, a := readAll(t, abl)
	if !numcheck.BitEqual(p["blocks.0.out"], a["blocks.0.out"]) || numcheck.RelErr(a["merger"], p["merger"]) < 1e-4 {
		t.Error("the ablation of blocks 1 and 2 should leave block 0 and move the merger")
	}
	for args, want := range map[string]string{"--ablate 1": "--ablate", "--ablate 9:0": "blocks 0..3", "--ablate-mode half --ablate 1:0": "zero or mean"} {
		if msg := cliFails(t, append(base, strings.Fields(args)...)...); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %q", args, msg, want)
		}
	}
	cmp := cli(t, "compare", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--reps", "1", "--b", "ablate=1:0+1:1,ablate-mode=zero")
	if !strings.Contains(cmp, "B = "+autoBackend(t)) || !strings.Contains(cmp, "ablate 1:0,1:1 (zero)") || strings.Contains(cmp, "outputs: identical") {
		t.Errorf("compare with an ablated side:\n%s", cmp)
	}
}

// A dump records where it came from, and verify --dump prints it: the checkpoint and its
// config's sha256, the image and its sha256 and sizes, the page, the settings and the
// ablation as run, the attention rows' query and its patch, the version.
func TestDumpProvenance(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "d.safetensors")
	cli(t, "run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet", "--dump", dump,
		"--attention-query", "5", "--ablate", "2:1", "--tile", "64")
	out := cli(t, "verify", "--dump", dump)
	hash := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	for _, want := range []string{
		"checkpoint             ../assets/demo", "config_sha256          " + hash("../assets/demo/config.json"),
		"image                  ../assets/sample.png", "image_sha256           " + hash("../assets/sample.png"),
		"interventions          ablate 2:1 (zero)", `"TileRows":64`, "attn_row_query         5", "model_type             qwen3_vl",
		"grid_thw               1,", "version                " + engine.Version,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify --dump lacks %q:\n%s", want, out)
		}
	}
	if msg := cliFails(t, "verify", "--dump", filepath.Join(t.TempDir(), "none.safetensors")); msg == "" {
		t.Error("verify --dump of a missing file did not fail")
	}
}

// sweep over the demo's heads: one row per (block, head); a row's change is exactly 0 before
// its block and not after; one row equals what two dumps (plain, and run --ablate) give;
// --over blocks gives one row per block; JSON carries the same rows.
func TestSweepCLI(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	csvPath, jsonPath := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.json")
	cli(t, append([]string{"sweep", "--out", csvPath, "--ablate-mode", "mean"}, base...)...)
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) != 1+4*4 || recs[0][2] != "merger_rel_change" {
		t.Fatalf("%d records (%v): %q", len(recs), err, recs)
	}
	for _, r := range recs[1:] {
		b, _ := strconv.Atoi(r[0])
		for k := range 4 {
			v, _ := strconv.ParseFloat(r[3+k], 64)
			if (v == 0) != (k < b) {
				t.Errorf("ablating %s:%s: block %d moved by %g", r[0], r[1], k, v)
			}
		}
	}
	// row 2:1 against two dumps
	plain, abl := filepath.Join(dir, "p.safetensors"), filepath.Join(dir, "a.safetensors")
	cli(t, append([]string{"run", "--quiet", "--dump", plain}, base...)...)
	cli(t, append([]string{"run", "--quiet", "--dump", abl, "--ablate", "2:1", "--ablate-mode", "mean"}, base...)...)
	_, p := readAll(t, plain)
	_, a := readAll(t, abl)
	want := engine.RelChange(a["merger"], p["merger"])
	got, _ := strconv.ParseFloat(recs[1+2*4+1][2], 64)
	if recs[1+2*4+1][0] != "2" || recs[1+2*4+1][1] != "1" || math.Abs(got-want) > 1e-5*want {
		t.Errorf("row %v: merger change %g, the dumps give %g", recs[1+2*4+1][:2], got, want)
	}
	cli(t, append([]string{"sweep", "--out", jsonPath, "--over", "blocks"}, base...)...)
	var js struct {
		Rows []engine.SweepRow `json:"rows"`
	}
	data, err = os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &js); err != nil || len(js.Rows) != 4 || js.Rows[3].Head != "*" || js.Rows[3].Blocks[2] != 0 || js.Rows[3].Blocks[3] == 0 {
		t.Errorf("--over blocks JSON: %+v (%v)", js.Rows, err)
	}
	for args, want := range map[string]string{"--out x.txt": ".csv or .json", "--over tiles --out x.csv": "heads or blocks", "--ablate-mode half --out x.csv": "zero or mean"} {
		if msg := cliFails(t, append(append([]string{"sweep"}, base...), strings.Fields(args)...)...); !strings.Contains(msg, want) {
			t.Errorf("sweep %s: %q, want %q", args, msg, want)
		}
	}
}

// --mask-patches: a rectangle and the same patches as a file of rows occlude alike; the header,
// the JSON and the dump's provenance name it; a bad mask is refused naming the flag.
func TestMaskCLI(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet"}
	rect, rows := filepath.Join(dir, "r.safetensors"), filepath.Join(dir, "w.safetensors")
	// the demo page is 18 x 28 patches: columns 0..1 of rows 0..1 are its first merge unit, rows 0-3
	list := filepath.Join(dir, "rows.txt")
	if err := os.WriteFile(list, []byte("3 2\n1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, append(base, "--dump", rect, "--mask-patches", "0,0,2,2")...)
	cli(t, append(base, "--dump", rows, "--mask-patches", list)...)
	_, a := readAll(t, rect)
	_, b := readAll(t, rows)
	if !numcheck.BitEqual(a["merger"], b["merger"]) {
		t.Error("the rectangle 0,0,2,2 and rows 0-3 occlude differently")
	}
	if out := cli(t, "verify", "--dump", rect); !strings.Contains(out, "interventions          mask rect:0,0,2,2") {
		t.Errorf("the dump's provenance does not name the mask:\n%s", out)
	}
	if msg := cliFails(t, append(base, "--mask-patches", "0,0,0,2")...); !strings.Contains(msg, "--mask-patches") {
		t.Errorf("a bad mask: %q", msg)
	}
}

// --mask-keys: a rectangle and the same patches as a file of rows mask alike; block 0 (before
// the mask's block 1) changes no bit, block 1 and the merger move; the header, the JSON and the
// dump's provenance name it; compare's mask-keys key takes it; bad specs are refused naming the
// flag.
func TestMaskKeysCLI(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--quiet"}
	rect, rows, plain := filepath.Join(dir, "r.safetensors"), filepath.Join(dir, "w.safetensors"), filepath.Join(dir, "p.safetensors")
	list := filepath.Join(dir, "rows.txt") // rows 0-3: the first merge unit, columns 0..1 of rows 0..1
	if err := os.WriteFile(list, []byte("3 2\n1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "run.json")
	out := cli(t, append(base[:len(base)-1], "--dump", rect, "--json", js, "--mask-keys", "0,0,2,2@1")...) // no --quiet: the header
	if !strings.Contains(out, "mask keys 0,0,2,2 from block 1") {
		t.Errorf("the header does not name the key mask:\n%s", out)
	}
	cli(t, append(base, "--dump", rows, "--mask-keys", list+"@1")...)
	cli(t, append(base, "--dump", plain)...)
	_, a := readAll(t, rect)
	_, b := readAll(t, rows)
	_, p := readAll(t, plain)
	if !numcheck.BitEqual(a["merger"], b["merger"]) {
		t.Error("the rectangle 0,0,2,2 and rows 0-3 mask differently")
	}
	if !numcheck.BitEqual(a["blocks.0.out"], p["blocks.0.out"]) || numcheck.BitEqual(a["blocks.1.out"], p["blocks.1.out"]) || numcheck.BitEqual(a["merger"], p["merger"]) {
		t.Error("masking keys from block 1 must leave block 0 as it was and move block 1 and the merger")
	}
	if data, err := os.ReadFile(js); err != nil || !strings.Contains(string(data), `"key_mask": "0,0,2,2@1"`) {
		t.Errorf("the JSON does not name the key mask (%v):\n%s", err, data)
	}
	if out := cli(t, "verify", "--dump", rect); !strings.Contains(out, "mask keys 0,0,2,2 from block 1") {
		t.Errorf("the dump's provenance does not name the key mask:\n%s", out)
	}
	for _, bad := range []string{"0,0,2,2", "0,0,0,2@1", "0,0,2,2@99"} {
		if msg := cliFails(t, append(base, "--mask-keys", bad)...); !strings.Contains(msg, "--mask-keys") && !strings.Contains(msg, "key mask") {
			t.Errorf("--mask-keys %s: %q", bad, msg)
		}
	}
	s, err := parseSettingSpec("--a", "mask-keys=0+0+2+2@1")
	if err != nil || s.KeyMask.Spec() != "0,0,2,2@1" {
		t.Errorf("compare's mask-keys=0+0+2+2@1: %+v, %v", s.KeyMask, err)
	}
}

// --keep-top: after block 1 only the 30 most attended merged tokens go on: blocks 0 and 1
// change no bit, the dump holds the 30 kept units and 0 merger rows for the others, a dropped
// query's later attention rows are 0; the header, the JSON and the provenance name it; keeping
// every token changes no bit; compare's keep-top key takes it; bad specs are refused.
func TestKeepTopCLI(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--attention-query", "8"}
	drop, plain, all := filepath.Join(dir, "d.safetensors"), filepath.Join(dir, "p.safetensors"), filepath.Join(dir, "a.safetensors")
	js := filepath.Join(dir, "run.json")
	out := cli(t, append(base, "--dump", drop, "--json", js, "--keep-top", "30@1")...)
	if !strings.Contains(out, "keep the top 30 tokens after block 1") {
		t.Errorf("the header does not name the drop:\n%s", out)
	}
	cli(t, append(base, "--dump", plain, "--quiet")...)
	cli(t, append(base, "--dump", all, "--quiet", "--keep-top", "126@1")...) // the demo page: 18 x 28 patches, 126 merged tokens
	f, d := readAll(t, drop)
	_, p := readAll(t, plain)
	_, a := readAll(t, all)
	if !numcheck.BitEqual(a["merger"], p["merger"]) || !numcheck.BitEqual(a["blocks.3.out"], p["blocks.3.out"]) {
		t.Error("keeping all 126 tokens moved the outputs")
	}
	if !numcheck.BitEqual(d["blocks.1.out"], p["blocks.1.out"]) || numcheck.BitEqual(d["blocks.2.out"], p["blocks.2.out"]) {
		t.Error("dropping after block 1 must leave blocks 0 and 1 as they were and move block 2")
	}
	units, err := f.ReadI64("kept_units")
	if err != nil || len(units) != 30 {
		t.Fatalf("kept_units: %v, %v", units, err)
	}
	O := len(d["merger"]) / 126
	zero := 0
	for u := range 126 {
		row := d["merger"][u*O : (u+1)*O]
		if slices.Max(row) == 0 && slices.Min(row) == 0 {
			zero++
			if slices.Contains(units, int64(u)) {
				t.Errorf("kept token %d is a 0 row of the merger", u)
			}
		}
	}
	if zero != 96 {
		t.Errorf("%d of the merger's rows are 0, want the 96 dropped", zero)
	}
	// patch 8 is merged token 2, which block 1 ranks below the top 30: it attends to nothing after
	if slices.Contains(units, 2) || slices.Max(d["blocks.2.attn_row"]) != 0 || slices.Max(d["blocks.1.attn_row"]) == 0 {
		t.Errorf("dropped query 8 (kept units %v): its attention rows in blocks 1 and 2 are not its own and 0", units)
	}
	if data, err := os.ReadFile(js); err != nil || !strings.Contains(string(data), `"keep_top": "30@1"`) {
		t.Errorf("the JSON does not name the drop (%v)", err)
	}
	if out := cli(t, "verify", "--dump", drop); !strings.Contains(out, "keep the top 30 tokens after block 1") {
		t.Errorf("the dump's provenance does not name the drop:\n%s", out)
	}
	for bad, want := range map[string]string{"30": "--keep-top", "127@1": "126 merged tokens", "30@4": "blocks 0-3"} {
		if msg := cliFails(t, append(base[:len(base)-2], "--keep-top", bad)...); !strings.Contains(msg, want) {
			t.Errorf("--keep-top %s: %q, want it to name %s", bad, msg, want)
		}
	}
	if s, err := parseSettingSpec("--b", "keep-top=random:8@2"); err != nil || s.KeepTop.Spec() != "random:8@2" {
		t.Errorf("compare's keep-top=random:8@2: %+v, %v", s.KeepTop, err)
	}
}

// --patch-from: block 1's output at a rectangle of patches taken from a mirrored copy of the
// image: block 0 is untouched, blocks 1.. and the merger move; patching from the image itself
// changes no bit; the header and the dump's provenance name it; another page size is refused.
func TestPatchFromCLI(t *testing.T) {
	dir := t.TempDir()
	img := testfixture.ReadPNG(t, "../assets/sample.png")
	b := img.Bounds()
	flip, small := image.NewRGBA(b), image.NewRGBA(image.Rect(0, 0, b.Dx()/2, b.Dy()/2))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			flip.Set(b.Max.X-1-x+b.Min.X, y, img.At(x, y))
			small.Set((x-b.Min.X)/2, (y-b.Min.Y)/2, img.At(x, y))
		}
	}
	write := func(name string, m image.Image) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, m); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	flipped, half := write("flip.png", flip), write("half.png", small)
	base := []string{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png"}
	plain, patched, self := filepath.Join(dir, "p.st"), filepath.Join(dir, "x.st"), filepath.Join(dir, "s.st")
	cli(t, append(base, "--quiet", "--dump", plain)...)
	out := cli(t, append(base, "--dump", patched, "--patch-from", flipped+":blocks.1.out@0,0,8,8")...)
	cli(t, append(base, "--quiet", "--dump", self, "--patch-from", "../assets/sample.png:blocks.1.out@0,0,8,8")...)
	if !strings.Contains(out, "intervention: patch "+flipped+":blocks.1.out@0,0,8,8") {
		t.Errorf("the header does not name the patch:\n%s", out)
	}
	_, p := readAll(t, plain)
	_, x := readAll(t, patched)
	_, s := readAll(t, self)
	if !numcheck.BitEqual(p["blocks.0.out"], x["blocks.0.out"]) || numcheck.BitEqual(p["blocks.1.out"], x["blocks.1.out"]) ||
		numcheck.BitEqual(p["merger"], x["merger"]) || !numcheck.BitEqual(p["merger"], s["merger"]) {
		t.Error("patching block 1 from the mirrored image: block 0 the same, block 1 and the merger moved; from the image itself: nothing")
	}
	if v := cli(t, "verify", "--dump", patched); !strings.Contains(v, "interventions          patch "+flipped) {
		t.Errorf("provenance:\n%s", v)
	}
	if msg := cliFails(t, append(base, "--patch-from", half+":blocks.1.out@0,0,2,2")...); !strings.Contains(msg, "same page") {
		t.Errorf("another page size: %q", msg)
	}
	// One head's slice of attn (block 2, head 1): blocks 0 and 1 untouched, block 2 moves;
	// from the image itself nothing; the header names it; a head the tower lacks is refused.
	head, headSelf := filepath.Join(dir, "h.st"), filepath.Join(dir, "hs.st")
	out = cli(t, append(base, "--dump", head, "--patch-from", flipped+":blocks.2.attn.h1@rows:3,4,5,40")...)
	cli(t, append(base, "--quiet", "--dump", headSelf, "--patch-from", "../assets/sample.png:blocks.2.attn.h1@rows:3,4,5,40")...)
	if !strings.Contains(out, "intervention: patch "+flipped+":blocks.2.attn.h1@rows:3,4,5,40") {
		t.Errorf("the header does not name the head patch:\n%s", out)
	}
	_, h := readAll(t, head)
	_, hs := readAll(t, headSelf)
	if !numcheck.BitEqual(p["blocks.1.out"], h["blocks.1.out"]) || numcheck.BitEqual(p["blocks.2.out"], h["blocks.2.out"]) ||
		!numcheck.BitEqual(p["merger"], hs["merger"]) {
		t.Error("patching block 2's head 1: blocks 0-1 the same, block 2 moved; from the image itself: nothing")
	}
	for _, bad := range []string{":blocks.2.attn.h9@0,0,2,2", ":blocks.2.attn@0,0,2,2", ":blocks.2.attn.hx@0,0,2,2"} {
		if msg := cliFails(t, append(base, "--patch-from", flipped+bad)...); !strings.Contains(msg, "head") && !strings.Contains(msg, "tap") {
			t.Errorf("%s: %q", bad, msg)
		}
	}
}

// autoBackend is the backend --backend auto picks here: metal on a Mac (or under the tests'
// stand-in GPU), else cpu.
func autoBackend(t *testing.T) string {
	name, _, err := backend.Resolve(backend.Auto)
	if err != nil {
		t.Fatal(err)
	}
	return name
}
