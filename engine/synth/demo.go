// demo.go constructs (does not sample) the weights of the "demo" preset: a small Qwen3-VL
// tower whose heads do something visible on a photo. Head 0 attends to patches of the same
// colour, head 1 to its neighbours, head 2 to the farthest patches, head 3 along its own
// row (block 0) or to textured patches (blocks 1-3). assets/DEMO.md explains every number.
//
// Invariant: the colour group (κ, L, a, b) carries nearly all of each token's norm, so
// LayerNorm divides the colour vector by its own length and head 0's q.k is the cosine of
// two (κ, L, a, b) vectors: largest for equal colours, because κ is the same for all.
// The mutation that would silently break it: κ = 0 (no patch-embed bias) — the tower still
// runs, but the cosine then sees only the direction of (L, a, b), warm fur and warm-grey
// background point the same way, and head 0 stops separating them (TestDemoMutations).
package synth

import (
	"fmt"

	"github.com/turbospark/inspector/engine"
)

// demoConfig is the "demo" preset (Preset fills the fields every model shares).
var demoConfig = engine.Config{ModelType: "qwen3_vl", Depth: 4, Hidden: 96, Heads: 4, Intermediate: 64, OutHidden: 48,
	NumPositionEmbedding: 2304, Deepstack: []int{1, 2}}

const (
	demoD    = 96 // hidden size
	demoHalf = 48 // channel c+48 always holds minus channel c: every token has mean 0
	demoHD   = 24 // head dim: rope dims 0..5 rows, 6..11 columns, 12..23 their halves partners
	demoI    = 64 // MLP width
)

// Residual channels (the positive half; channel c+48 holds -channel c).
const (
	chKappa   = 0  // κ, the constant of the colour group (patch-embed bias)
	chL       = 1  // luminance (R+G+B)/3, patch mean
	chA       = 2  // red-green R-G, patch mean
	chB       = 3  // yellow-blue (R+G)/2-B, patch mean
	chGX      = 4  // luminance of the patch's right half minus its left half
	chGY      = 5  // bottom half minus top half
	chRow     = 6  // 2r/(gh-1)-1 (pos_embed)
	chCol     = 7  // 2c/(gw-1)-1 (pos_embed)
	chDetail  = 8  // 12 channels: per 8x8 quadrant, its horizontal, vertical and diagonal Haar detail
	chEnergy  = 20 // texture energy, written by block 0's MLP
	chScratch = 24 // head h writes its output to chScratch+4h .. chScratch+4h+2 (24..38)
)

// Scales in the residual stream. The colour group carries nearly all the norm, so
// LayerNorm's per-token rescale is set by the colour alone; every other feature is kept
// small (demoSmall) and read back with large weights.
const (
	demoKappa  = 2.0
	demoSL     = 1.0 // luminance counts less than hue: the fur is one hue with dark stripes
	demoSA     = 3.0
	demoSB     = 3.0
	demoSmall  = 0.1  // gx, gy, Haar details, position ramps
	demoMLPIn  = 60.0 // block 0 fc1 gain s on each detail
	demoSat    = 1.0  // ... whose |s u| saturates at demoSat
	demoEnergy = 1.1  // block 0 fc2: energy = demoEnergy/s * sum of the saturated |s u|
)

// Rope slots inside a head (hd 24: d = 12, inv_freq[k] = 10000^(-k/6), spec section 5):
// k = 0..5 turn 1, 0.215, 0.0464, 0.01, 0.00215, 0.000464 rad per patch.
func rowDim(k int) int { return k }
func colDim(k int) int { return 6 + k }

// demoBlock is what differs between blocks.
type demoBlock struct {
	colour float64    // head 0: weight of q and k on (κ, L, a, b)
	near   [3]float64 // head 1: q = k = bias in rope slots 0, 1, 2 of both axes
	far    float64    // head 2: q = +far, k = -far in rope slot 2 of both axes
	row    [3]float64 // head 3 (block 0): as near, on the row axis only
	edge   float64    // head 3 (blocks 1-3): k = edge * energy, q = edge * energy + edgeQ
	edgeQ  float64
	gain   [4]float64 // proj: gain of each head's output into its scratch channels
}

// Sharper colour, wider neighbourhoods, more mixing in the middle blocks.
var demoBlocks = []demoBlock{
	{colour: 3.5, near: [3]float64{2.5, 8, 6}, far: 7, row: [3]float64{2.5, 8, 6}, gain: [4]float64{0.02, 0.02, 0.02, 0.02}},
	{colour: 4.5, near: [3]float64{2, 8, 6}, far: 7, edge: 8, edgeQ: 4, gain: [4]float64{0.04, 0.03, 0.02, 0.02}},
	{colour: 5.5, near: [3]float64{1, 7, 7}, far: 7, edge: 8, edgeQ: 4, gain: [4]float64{0.06, 0.04, 0.02, 0.02}},
	{colour: 6.5, near: [3]float64{0, 6, 8}, far: 7, edge: 8, edgeQ: 4, gain: [4]float64{0.02, 0.02, 0.01, 0.01}},
}

// tensorSet is every tensor of a checkpoint by short name.
type tensorSet map[string][]float32

// buildDemo returns the constructed tensors of the demo preset (c = Preset("demo")).
func buildDemo(c engine.Config) tensorSet {
	ts := tensorSet{}
	for _, s := range c.ExpectedTensors() {
		n := 1
		for _, d := range s.Shape {
			n *= d
		}
		ts[s.Name] = make([]float32, n)
	}
	demoPatchEmbed(ts, c)
	demoPosEmbed(ts, c)
	for i, b := range demoBlocks {
		demoBlockWeights(ts, i, b)
	}
	demoMergers(ts, c)
	return ts
}

// writeCh adds v at column col of the rows of residual channel ch of a [rows, cols] matrix
// whose rows are residual channels: +v to ch, -v to ch+48.
func writeCh(m []float32, cols, ch, col int, v float64) {
	m[ch*cols+col] += float32(v)
	m[(ch+demoHalf)*cols+col] -= float32(v)
}

// readCh makes row `row` of a [rows, 96] matrix read w * (normalized channel ch): w/2 from
// ch and -w/2 from its negative.
func readCh(m []float32, row, ch int, w float64) {
	m[row*demoD+ch] += float32(w / 2)
	m[row*demoD+ch+demoHalf] -= float32(w / 2)
}

// demoPatchEmbed: the Conv3d computes patch means and Haar details of the normalized pixels
// (in [-1, 1]). Column of the flattened [96, 3, 2, 16, 16] weight: rgb*512 + t*256 + y*16 + x;
// each feature is spread over both temporal slices with half the weight.
func demoPatchEmbed(ts tensorSet, c engine.Config) {
	w, bias := ts["patch_embed.proj.weight"], ts["patch_embed.proj.bias"]
	cols := c.PatchDim()
	feature := func(ch int, f func(rgb, y, x int) float64) {
		for rgb := 0; rgb < 3; rgb++ {
			for t := 0; t < 2; t++ {
				for y := 0; y < 16; y++ {
					for x := 0; x < 16; x++ {
						if v := f(rgb, y, x); v != 0 {
							writeCh(w, cols, ch, rgb*512+t*256+y*16+x, v/2)
						}
					}
				}
			}
		}
	}
	sign := func(b bool) float64 {
		if b {
			return 1
		}
		return -1
	}
	const luma = 1.0 / 3
	feature(chL, func(rgb, y, x int) float64 { return demoSL * luma / 256 })
	feature(chA, func(rgb, y, x int) float64 { return demoSA * [3]float64{1, -1, 0}[rgb] / 256 })
	feature(chB, func(rgb, y, x int) float64 { return demoSB * [3]float64{0.5, 0.5, -1}[rgb] / 256 })
	feature(chGX, func(rgb, y, x int) float64 { return demoSmall * luma * sign(x >= 8) / 128 })
	feature(chGY, func(rgb, y, x int) float64 { return demoSmall * luma * sign(y >= 8) / 128 })
	details := [3]func(y, x int) float64{
		func(y, x int) float64 { return sign(x%8 >= 4) },                 // right minus left
		func(y, x int) float64 { return sign(y%8 >= 4) },                 // bottom minus top
		func(y, x int) float64 { return sign((x%8 >= 4) == (y%8 >= 4)) }, // diagonal
	}
	for q := 0; q < 4; q++ { // quadrant (q/2, q%2), 8x8 pixels; half a quadrant is 32 pixels
		for k, d := range details {
			feature(chDetail+3*q+k, func(rgb, y, x int) float64 {
				if y/8 != q/2 || x/8 != q%2 {
					return 0
				}
				return demoSmall * luma * d(y, x) / 32
			})
		}
	}
	bias[chKappa], bias[chKappa+demoHalf] = demoKappa, -demoKappa
}

// demoPosEmbed: the 48x48 table holds linear ramps, so the bilinear interpolation
// (align_corners) gives exactly 2r/(gh-1)-1 and 2c/(gw-1)-1 on every grid.
func demoPosEmbed(ts tensorSet, c engine.Config) {
	n := c.PosGrid()
	e := ts["pos_embed.weight"]
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			row := e[(y*n+x)*demoD : (y*n+x+1)*demoD]
			r, cc := demoSmall*(2*float64(y)/float64(n-1)-1), demoSmall*(2*float64(x)/float64(n-1)-1)
			row[chRow], row[chRow+demoHalf] = float32(r), float32(-r)
			row[chCol], row[chCol+demoHalf] = float32(cc), float32(-cc)
		}
	}
}

// demoBlockWeights: LayerNorms are identities (gain 1, bias 0); qkv puts what each head
// compares into rope slots chosen by frequency; proj writes each head's output to its own
// scratch channels; block 0's MLP turns the Haar details into a texture energy.
func demoBlockWeights(ts tensorSet, i int, b demoBlock) {
	p := func(s string) []float32 { return ts[fmt.Sprintf("blocks.%d.%s", i, s)] }
	for _, n := range []string{"norm1.weight", "norm2.weight"} {
		for j := range p(n) {
			p(n)[j] = 1
		}
	}
	w, bias := p("attn.qkv.weight"), p("attn.qkv.bias")
	qRow := func(h, dim int) int { return h*demoHD + dim }
	kRow := func(h, dim int) int { return demoD + h*demoHD + dim }
	vRow := func(h, dim int) int { return 2*demoD + h*demoHD + dim }
	// Head 0, colour: q = k = (κ, L, a, b) in the two slowest slots of each axis; over a
	// 28-patch row position turns them by at most 0.058 rad, and each sits alone in its
	// rope pair (the partner dim is 0), so rope only scales it by cos(angle) >= 0.998.
	for j, ch := range []int{chKappa, chL, chA, chB} {
		dim := [4]int{rowDim(5), colDim(5), rowDim(4), colDim(4)}[j]
		readCh(w, qRow(0, dim), ch, b.colour)
		readCh(w, kRow(0, dim), ch, b.colour)
	}
	// Head 1, near: constant q = k in the fast slots: q.R(δ)k = Σ a² cos(f δ), largest at
	// δ = 0. Slot 0 (1 rad) is sharp but returns at δ = 6; slot 1 (0.215) kills that and
	// returns at δ = 29; slot 2 (0.0464) kills that.
	for k, a := range b.near {
		for _, dim := range []int{rowDim(k), colDim(k)} {
			bias[qRow(1, dim)], bias[kRow(1, dim)] = float32(a), float32(a)
		}
	}
	// Head 2, far: q = -k in slot 2: -a² cos(0.0464 δ) grows with δ up to 67 patches.
	for _, dim := range []int{rowDim(2), colDim(2)} {
		bias[qRow(2, dim)], bias[kRow(2, dim)] = float32(b.far), float32(-b.far)
	}
	// Head 3: the row head (block 0) or the edge head (blocks 1-3, once the energy exists).
	for k, a := range b.row {
		if a != 0 {
			bias[qRow(3, rowDim(k))], bias[kRow(3, rowDim(k))] = float32(a), float32(a)
		}
	}
	if b.edge != 0 {
		readCh(w, qRow(3, rowDim(5)), chEnergy, b.edge)
		readCh(w, kRow(3, rowDim(5)), chEnergy, b.edge)
		bias[qRow(3, rowDim(5))] = float32(b.edgeQ)
	}
	// Values: heads 0-2 carry (L, a, b), head 3 (gx, gy, energy); proj writes head h's three
	// output dims to its scratch channels, which no head reads.
	for h := 0; h < 4; h++ {
		src := [3]int{chL, chA, chB}
		if h == 3 {
			src = [3]int{chGX, chGY, chEnergy}
		}
		for dim, ch := range src {
			readCh(w, vRow(h, dim), ch, 1)
			writeCh(p("attn.proj.weight"), demoD, chScratch+4*h+dim, h*demoHD+dim, b.gain[h])
		}
	}
	if i == 0 {
		demoEnergyMLP(p("mlp.linear_fc1.weight"), p("mlp.linear_fc1.bias"), p("mlp.linear_fc2.weight"), p("mlp.linear_fc2.bias"))
	}
}

// demoEnergyMLP: for each of the 14 detail channels u (gx, gy and the 12 Haar details) four
// hidden units g(su) - g(su - c) + g(-su) - g(-su - c) ~ min(|su|, c), g the tanh GELU (near
// 0 it is ~ (su)², which quietens noise). fc2 adds demoEnergy/s of each to the energy
// channel: a count of textured sub-blocks, saturated so one high-contrast patch (a pupil)
// does not outweigh every whisker.
func demoEnergyMLP(fc1, fc1b, fc2, fc2b []float32) {
	src := []int{chGX, chGY}
	for k := 0; k < 12; k++ {
		src = append(src, chDetail+k)
	}
	out := demoEnergy / demoMLPIn
	for j, ch := range src {
		for k, sgn := range [4]float64{1, 1, -1, -1} {
			u := 4*j + k
			readCh(fc1, u, ch, sgn*demoMLPIn)
			o := out
			if k%2 == 1 {
				fc1b[u], o = -demoSat, -out
			}
			writeCh(fc2, demoI, chEnergy, u, o)
		}
	}
	// At u = 0 each saturating pair leaves -g(-c); the fc2 bias takes the 28 of them away.
	off := -2 * float64(len(src)) * demoGeluAtMinusSat * out
	fc2b[chEnergy], fc2b[chEnergy+demoHalf] = float32(-off), float32(off)
}

// demoGeluAtMinusSat is g(-demoSat), the tanh GELU at -1, written out rather than computed:
// math.Tanh may differ in its last bit between CPU architectures (fused multiply-adds), and
// the committed checkpoint must be rebuilt byte for byte everywhere. TestDemoGeluConstant
// checks it against the formula.
const demoGeluAtMinusSat = -0.15880800939172324

// demoMergers: norms are identities, fc1 is the identity, fc2 averages the four tokens of a
// 2x2 window over the 48 positive channels: out = mean over the window of gelu(LN(h))[0:48].
func demoMergers(ts tensorSet, c engine.Config) {
	M := c.MergedDim()
	for _, p := range c.MergerPrefixes() {
		for j := range ts[p+"norm.weight"] {
			ts[p+"norm.weight"][j] = 1
		}
		fc1, fc2 := ts[p+"linear_fc1.weight"], ts[p+"linear_fc2.weight"]
		for j := 0; j < M; j++ {
			fc1[j*M+j] = 1
		}
		for o := 0; o < c.OutHidden; o++ {
			for t := 0; t < 4; t++ {
				fc2[o*M+t*demoD+o] = 0.25
			}
		}
	}
}
