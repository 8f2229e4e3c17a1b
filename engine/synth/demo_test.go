// demo_test.go holds the committed demo checkpoint (assets/demo) to what assets/DEMO.md
// promises, measured on the sample photo through the real engine: head 0 attends to patches
// of the query's colour wherever they are, head 1 to its neighbours, head 2 far away, head 3
// along the query's row (block 0) or to edges (blocks 1-3); every output is finite; blocks
// change the activations; and Generate rebuilds the committed files byte for byte.
//
// Invariant: each check measures behaviour on the photo (patch colours and edges computed
// here from the resized image, distances from the layout), never the construction's own
// numbers. The mutation that would silently break it: a threshold that a wrong head also
// meets — TestDemoMutations breaks each head in turn and requires its check to fail.
package synth

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/internal/testfixture"
)

const (
	demoAssets = "../../assets/demo"
	demoPhoto  = "../../assets/sample.png"
)

// demoRun is the tower run on the photo plus per-patch facts about the photo, indexed by
// sequence position (merge-window order).
type demoRun struct {
	run    *engine.Run
	pos    []geom.PatchPos
	at     map[geom.PatchPos]int // (row, col) -> sequence index
	rgb    [][3]float64          // patch mean colour, 0..255
	edge   []float64             // mean |step| between neighbouring 4x4-pixel luminance block means
	gh, gw int
}

func runDemo(t testing.TB, dir string) *demoRun {
	t.Helper()
	e := testfixture.Engine(t, dir, cpu.New(0), engine.Settings{Keep: engine.Keep{Attention: true, Outputs: true}})
	ck := e.Checkpoint
	in, err := ck.LoadImage(demoPhoto, imageproc.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	run := testfixture.RunAll(t, e, in)
	img, p := in.Image.Resized, ck.Config.PatchSize
	d := &demoRun{run: run, pos: run.Layout.Pos, at: map[geom.PatchPos]int{}, gh: in.Grids[0].H, gw: in.Grids[0].W}
	for i, pp := range d.pos {
		d.at[pp] = i
		var c [3]float64
		var blocks [4][4]float64
		for y := 0; y < p; y++ {
			for x := 0; x < p; x++ {
				o := ((pp.Row*p+y)*img.W + pp.Col*p + x) * 3
				var l float64
				for k := range c {
					c[k] += float64(img.Pix[o+k]) / float64(p*p)
					l += float64(img.Pix[o+k]) / 3
				}
				blocks[y*4/p][x*4/p] += l * 16 / float64(p*p)
			}
		}
		var g float64
		for a := 0; a < 4; a++ {
			for b := 0; b < 3; b++ {
				g += math.Abs(blocks[a][b+1]-blocks[a][b]) + math.Abs(blocks[b+1][a]-blocks[b][a])
			}
		}
		d.rgb, d.edge = append(d.rgb, c), append(d.edge, g/24)
	}
	return d
}

func (d *demoRun) row(t testing.TB, block, head, query int) []float32 {
	t.Helper()
	r, err := d.run.Probes.AttentionRow(block, head, query)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (d *demoRun) dist(i, j int) float64 {
	return math.Hypot(float64(d.pos[i].Row-d.pos[j].Row), float64(d.pos[i].Col-d.pos[j].Col))
}

func colourDist(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

func abs(x int) int { return max(x, -x) }

// lattice is 25 queries spread over the grid, corners and edges included.
func (d *demoRun) lattice() []int {
	var q []int
	for _, r := range []int{0, 4, 9, 13, d.gh - 1} {
		for _, c := range []int{0, 7, 14, 20, d.gw - 1} {
			q = append(q, d.at[geom.PatchPos{Row: r, Col: c}])
		}
	}
	return q
}

// meanDist is the attention-weighted mean distance from the query, in patches.
func (d *demoRun) meanDist(row []float32, q int) float64 {
	var s float64
	for j, a := range row {
		s += float64(a) * d.dist(q, j)
	}
	return s
}

// nearStats: the largest distance among each lattice query's 5 most attended patches
// (worst query) and the mean attention distance (mean over the queries).
func (d *demoRun) nearStats(t testing.TB, block, head int) (worstTop5, meanDist float64) {
	qs := d.lattice()
	for _, q := range qs {
		row := d.row(t, block, head, q)
		order := make([]int, len(row))
		for j := range order {
			order[j] = j
		}
		sort.Slice(order, func(a, b int) bool { return row[order[a]] > row[order[b]] })
		for _, j := range order[:5] {
			worstTop5 = math.Max(worstTop5, d.dist(q, j))
		}
		meanDist += d.meanDist(row, q) / float64(len(qs))
	}
	return worstTop5, meanDist
}

// farStats: the mean attention distance over the lattice queries, and the smallest ratio of
// a query's mean attention distance to the mean distance of all patches from it (1 for a
// head that attends everywhere alike).
func (d *demoRun) farStats(t testing.TB, block, head int) (meanDist, worstRatio float64) {
	qs := d.lattice()
	worstRatio = math.Inf(1)
	for _, q := range qs {
		md := d.meanDist(d.row(t, block, head, q), q)
		var all float64
		for j := range d.pos {
			all += d.dist(q, j) / float64(len(d.pos))
		}
		meanDist += md / float64(len(qs))
		worstRatio = math.Min(worstRatio, md/all)
	}
	return meanDist, worstRatio
}

// uniformQueries are patches inside a region of one colour (every 3x3 neighbour within 25
// of the centre's mean colour): on this photo fur at (2,10) and (8,16), background at
// (4,26), light chin fur at (16,5).
func (d *demoRun) uniformQueries() []int {
	var qs []int
	for i, p := range d.pos {
		if p.Row == 0 || p.Col == 0 || p.Row == d.gh-1 || p.Col == d.gw-1 || (p.Row+p.Col)%3 != 0 {
			continue
		}
		ok := true
		for dr := -1; dr <= 1; dr++ {
			for dc := -1; dc <= 1; dc++ {
				ok = ok && colourDist(d.rgb[i], d.rgb[d.at[geom.PatchPos{Row: p.Row + dr, Col: p.Col + dc}]]) <= 25
			}
		}
		if ok {
			qs = append(qs, i)
		}
	}
	return qs
}

// colourStats over the uniform queries (worst query each): the attention mass farther than
// 3 patches from the query (a colour head looks across the photo, not around the query),
// and within that far mass, the share on patches within colour distance 32 of the query
// divided by the share such patches have among the far patches (1 for a colour-blind head).
func (d *demoRun) colourStats(t testing.TB, block, head int) (worstFarMass, worstLift float64) {
	worstFarMass, worstLift = 1, math.Inf(1)
	for _, q := range d.uniformQueries() {
		var far, farClose, n, nClose float64
		for j, a := range d.row(t, block, head, q) {
			if d.dist(q, j) <= 3 {
				continue
			}
			close := colourDist(d.rgb[q], d.rgb[j]) <= 32
			far, n = far+float64(a), n+1
			if close {
				farClose, nClose = farClose+float64(a), nClose+1
			}
		}
		worstFarMass = math.Min(worstFarMass, far)
		worstLift = math.Min(worstLift, (farClose/far)/(nClose/n))
	}
	return worstFarMass, worstLift
}

// edgeStats: over the lattice queries, the smallest ratio of the attention-weighted mean
// edge strength to the photo's mean edge strength (1 for a head blind to edges).
func (d *demoRun) edgeStats(t testing.TB, block, head int) (worstRatio float64) {
	var mean float64
	for _, e := range d.edge {
		mean += e / float64(len(d.edge))
	}
	worstRatio = math.Inf(1)
	for _, q := range d.lattice() {
		var w float64
		for j, a := range d.row(t, block, head, q) {
			w += float64(a) * d.edge[j]
		}
		worstRatio = math.Min(worstRatio, w/mean)
	}
	return worstRatio
}

// rowStats: over the lattice queries, the smallest attention mass within one row of the
// query's, and the smallest attention-weighted mean column distance.
func (d *demoRun) rowStats(t testing.TB, block, head int) (worstMass, worstSpread float64) {
	worstMass, worstSpread = 1, math.Inf(1)
	for _, q := range d.lattice() {
		var mass, spread float64
		for j, a := range d.row(t, block, head, q) {
			if abs(d.pos[j].Row-d.pos[q].Row) <= 1 {
				mass += float64(a)
			}
			spread += float64(a) * float64(abs(d.pos[j].Col-d.pos[q].Col))
		}
		worstMass, worstSpread = math.Min(worstMass, mass), math.Min(worstSpread, spread)
	}
	return worstMass, worstSpread
}

// The checks, each returning what it measured and an error when the head misbehaves.

func (d *demoRun) checkColour(t testing.TB, block int) (string, error) {
	if n := len(d.uniformQueries()); n < 3 {
		return "", fmt.Errorf("only %d uniform-colour queries on the photo", n)
	}
	farMass, lift := d.colourStats(t, block, 0)
	got := fmt.Sprintf("colour: mass beyond 3 patches >= %.2f, same-colour lift >= %.2f", farMass, lift)
	if farMass < 0.3 || lift < 1.5 {
		return got, fmt.Errorf("block %d head 0 does not attend by colour: %s (want >= 0.3 and >= 1.5)", block, got)
	}
	return got, nil
}

func (d *demoRun) checkNear(t testing.TB, block int) (string, float64, error) {
	top5, mean := d.nearStats(t, block, 1)
	got := fmt.Sprintf("near: top-5 within %.2f, mean distance %.2f", top5, mean)
	if top5 > 2 || mean > 3 {
		return got, mean, fmt.Errorf("block %d head 1 is not local: %s (want <= 2 and <= 3)", block, got)
	}
	return got, mean, nil
}

func (d *demoRun) checkFar(t testing.TB, block int, nearMean float64) (string, error) {
	mean, ratio := d.farStats(t, block, 2)
	got := fmt.Sprintf("far: mean distance %.2f, >= %.2fx the patches' mean distance", mean, ratio)
	if mean < 5*nearMean || ratio < 1.15 {
		return got, fmt.Errorf("block %d head 2 does not attend far: %s (want >= 5x near's %.2f and >= 1.15)", block, got, nearMean)
	}
	return got, nil
}

func (d *demoRun) checkHead3(t testing.TB, block int) (string, error) {
	if block == 0 {
		mass, spread := d.rowStats(t, 0, 3)
		got := fmt.Sprintf("row: mass within a row %.2f, column spread %.2f", mass, spread)
		if mass < 0.8 || spread < 4 {
			return got, fmt.Errorf("block 0 head 3 does not attend along the row: %s (want >= 0.8 and >= 4)", got)
		}
		return got, nil
	}
	ratio := d.edgeStats(t, block, 3)
	got := fmt.Sprintf("edge: attended edge strength >= %.2fx the photo's mean", ratio)
	if ratio < 1.25 {
		return got, fmt.Errorf("block %d head 3 does not attend to edges: %s (want >= 1.25)", block, got)
	}
	return got, nil
}

func TestDemoHeads(t *testing.T) {
	d := runDemo(t, demoAssets)
	for b := 0; b < d.run.Config().Depth; b++ {
		c, err := d.checkColour(t, b)
		if err != nil {
			t.Error(err)
		}
		n, nearMean, err := d.checkNear(t, b)
		if err != nil {
			t.Error(err)
		}
		f, err := d.checkFar(t, b, nearMean)
		if err != nil {
			t.Error(err)
		}
		h3, err := d.checkHead3(t, b)
		if err != nil {
			t.Error(err)
		}
		t.Logf("block %d: %s | %s | %s | %s | change %.3f", b, c, n, f, h3, d.run.MeanChange(b))
	}
}

// Every output is finite and every block moves the activations a little (the app colours
// blocks by this change).
func TestDemoOutputs(t *testing.T) {
	d := runDemo(t, demoAssets)
	r := d.run
	named := map[string][]float32{"embed": r.Embed, "merger": r.Merger}
	for i, o := range r.Probes.Outputs() {
		named[fmt.Sprintf("block %d", i)] = o
	}
	for i, o := range r.Deepstack {
		named[fmt.Sprintf("deepstack %d", i)] = o
	}
	if len(r.Probes.Outputs()) != 4 || len(r.Deepstack) != 2 || len(r.Merger) != 126*48 {
		t.Fatalf("%d block outputs, %d deepstack outputs, merger of %d values", len(r.Probes.Outputs()), len(r.Deepstack), len(r.Merger))
	}
	for name, v := range named {
		var mx float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%s holds %v", name, x)
			}
			mx = math.Max(mx, math.Abs(float64(x)))
		}
		if mx == 0 || mx > 100 {
			t.Errorf("%s: max |x| = %v", name, mx)
		}
	}
	for b := range r.Probes.Outputs() {
		if c := r.MeanChange(b); c < 0.02 || c > 0.3 {
			t.Errorf("block %d changes the activations by %.3f, want 0.02..0.3", b, c)
		}
	}
}

// The committed files are what Generate writes today: the assets cannot drift from the code.
func TestDemoAssetsAreGenerated(t *testing.T) {
	dir := t.TempDir()
	if err := Generate(dir, "demo", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "preprocessor_config.json", "model.safetensors"} {
		want, err := os.ReadFile(filepath.Join(demoAssets, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Generate(demo) differs from assets/demo (%d vs %d bytes); regenerate with: inspector gen --preset demo --dtype f32 --out assets/demo", name, len(got), len(want))
		}
	}
	if fi, err := os.Stat(filepath.Join(demoAssets, "model.safetensors")); err != nil || fi.Size() > 5<<20 {
		t.Errorf("assets/demo/model.safetensors: %v, want at most 5 MiB", err)
	}
}

// Generate keeps every preset: the demo's config is Preset("demo"), a random preset is what
// Write makes, an unknown preset is an error.
func TestGenerate(t *testing.T) {
	c, err := Preset("demo")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hidden != 96 || c.Heads != 4 || c.HeadDim() != demoHD || c.Depth != len(demoBlocks) || !c.HasDeepstack() || c.PatchSize != 16 || c.PosGrid() != 48 {
		t.Errorf("Preset(demo) = %+v", c)
	}
	a, b := t.TempDir(), t.TempDir()
	if err := Generate(a, "tiny", Options{DType: dtype.F32, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	tiny, _ := Preset("tiny")
	if err := Write(b, tiny, Options{DType: dtype.F32, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(filepath.Join(a, "model.safetensors"))
	y, _ := os.ReadFile(filepath.Join(b, "model.safetensors"))
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Error("Generate(tiny) differs from Write(Preset(tiny))")
	}
	if err := Generate(t.TempDir(), "no-such-preset", Options{}); err == nil {
		t.Error("Generate accepted an unknown preset")
	}
	ck, err := engine.OpenCheckpoint(demoAssets)
	if err != nil {
		t.Fatal(err)
	}
	if dt := ck.DTypeCounts(); dt[dtype.F32] != len(c.ExpectedTensors()) {
		t.Errorf("assets/demo dtypes %v, want all F32", dt)
	}
}

// The energy MLP's bias uses g(-demoSat) written out; it must be the tanh GELU's value.
func TestDemoGeluConstant(t *testing.T) {
	x := -demoSat
	g := 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	if math.Abs(g-demoGeluAtMinusSat) > 1e-15 {
		t.Errorf("demoGeluAtMinusSat = %v, the tanh GELU at %v is %v", demoGeluAtMinusSat, x, g)
	}
}

// Each head's check fails when that head is broken: the checks measure the construction,
// not something any head would show.
func TestDemoMutations(t *testing.T) {
	c, err := Preset("demo")
	if err != nil {
		t.Fatal(err)
	}
	qkv := func(ts tensorSet, b int) ([]float32, []float32) {
		return ts[fmt.Sprintf("blocks.%d.attn.qkv.weight", b)], ts[fmt.Sprintf("blocks.%d.attn.qkv.bias", b)]
	}
	mutations := []struct {
		name   string
		mutate func(ts tensorSet)
		check  func(d *demoRun) error
	}{
		{"colour head with random q, k of the same size", func(ts tensorSet) {
			rng := rand.New(rand.NewPCG(1, 2))
			w, _ := qkv(ts, 1)
			var ss float64
			for _, v := range w[:demoHD*demoD] {
				ss += float64(v) * float64(v)
			}
			std := math.Sqrt(ss / float64(demoHD*demoD))
			for _, off := range []int{0, demoD * demoD} { // q rows, k rows of head 0
				for j := range demoHD * demoD {
					w[off+j] = float32(rng.NormFloat64() * std)
				}
			}
		}, func(d *demoRun) error { _, err := d.checkColour(t, 1); return err }},
		{"colour head copied from the near head", func(ts tensorSet) {
			w, b := qkv(ts, 1)
			for _, off := range []int{0, demoD} { // q, k of head 0 <- head 1
				clear(w[off*demoD : (off+demoHD)*demoD])
				copy(b[off:off+demoHD], b[off+demoHD:off+2*demoHD])
			}
		}, func(d *demoRun) error { _, err := d.checkColour(t, 1); return err }},
		{"κ = 0", func(ts tensorSet) {
			b := ts["patch_embed.proj.bias"]
			b[chKappa], b[chKappa+demoHalf] = 0, 0
		}, func(d *demoRun) error { _, err := d.checkColour(t, 1); return err }},
		{"near head with q = -k", func(ts tensorSet) {
			_, b := qkv(ts, 1)
			for j := demoD + demoHD; j < demoD+2*demoHD; j++ {
				b[j] = -b[j]
			}
		}, func(d *demoRun) error { _, _, err := d.checkNear(t, 1); return err }},
		{"near head in the slowest rope slots", func(ts tensorSet) {
			_, b := qkv(ts, 1)
			for _, off := range []int{demoHD, demoD + demoHD} {
				for k := 0; k < 3; k++ {
					b[off+rowDim(5-k)], b[off+colDim(5-k)] = b[off+rowDim(k)], b[off+colDim(k)]
					b[off+rowDim(k)], b[off+colDim(k)] = 0, 0
				}
			}
		}, func(d *demoRun) error { _, _, err := d.checkNear(t, 1); return err }},
		{"far head with q = k", func(ts tensorSet) {
			_, b := qkv(ts, 1)
			for j := demoD + 2*demoHD; j < demoD+3*demoHD; j++ {
				b[j] = -b[j]
			}
		}, func(d *demoRun) error { _, err := d.checkFar(t, 1, 1.1); return err }},
		{"no energy MLP", func(ts tensorSet) {
			clear(ts["blocks.0.mlp.linear_fc2.weight"])
			clear(ts["blocks.0.mlp.linear_fc2.bias"])
		}, func(d *demoRun) error { _, err := d.checkHead3(t, 1); return err }},
		{"row head on the column axis", func(ts tensorSet) {
			_, b := qkv(ts, 0)
			for _, off := range []int{3 * demoHD, demoD + 3*demoHD} {
				for k := 0; k < 3; k++ {
					b[off+colDim(k)], b[off+rowDim(k)] = b[off+rowDim(k)], 0
				}
			}
		}, func(d *demoRun) error { _, err := d.checkHead3(t, 0); return err }},
	}
	for _, m := range mutations {
		ts := buildDemo(c)
		m.mutate(ts)
		dir := t.TempDir()
		if err := Write(dir, c, Options{DType: dtype.F32, Fill: func(name string, _ []int) []float32 { return ts[name] }}); err != nil {
			t.Fatal(err)
		}
		if err := m.check(runDemo(t, dir)); err == nil {
			t.Errorf("%s: the check still passes", m.name)
		} else {
			t.Logf("%s: %v", m.name, err)
		}
	}
}

// Every preset writes a checkpoint that opens as the family it names, with the config it was
// made from (Qwen2-VL's under its own key names: embed_dim, hidden_size as the merger's
// output, mlp_ratio) and the processor its family's hub files carry.
func TestPresetsOpen(t *testing.T) {
	for _, name := range []string{"tiny", "tiny-qwen3.5", "tiny-qwen2-vl", "tiny-qwen2.5-vl"} {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := Generate(dir, name, Options{DType: dtype.BF16, Seed: 3}); err != nil {
			t.Fatal(err)
		}
		ck, err := engine.OpenCheckpoint(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := ck.Config
		if got.ModelType != c.ModelType || got.Hidden != c.Hidden || got.Intermediate != c.Intermediate ||
			got.OutHidden != c.OutHidden || got.PatchSize != c.PatchSize || got.HasPosEmbed() != c.HasPosEmbed() || got.HiddenAct != c.HiddenAct ||
			got.WindowSize != c.WindowSize || fmt.Sprint(got.FullAttBlocks) != fmt.Sprint(c.FullAttBlocks) {
			t.Errorf("%s: opened as %+v, written from %+v", name, got, c)
		}
		if ck.Pre.PatchSize != c.PatchSize {
			t.Errorf("%s: the processor's patch is %d, the tower's %d", name, ck.Pre.PatchSize, c.PatchSize)
		}
	}
	if c, _ := Preset("qwen2-vl-2b"); c.Family() != "Qwen2-VL" || c.HasPosEmbed() || c.Intermediate != 4*c.Hidden {
		t.Errorf("qwen2-vl-2b: %+v", c)
	}
}
