// Package bench times the tower: `inspector bench` measures it per block on this machine
// (bench.go), `inspector gpumodel` models the Metal kernels on named Apple GPUs and, on a Mac,
// measures them beside (gpumodel.go). The app parses the commands' flags and calls Run and
// GPUModel.
package bench

// bench.go: `inspector bench`: the tower's per-block time on a checkpoint, swept over patch
// counts, MLP tile sizes and residency modes; each configuration runs in a child process of
// its own, so the peak RSS it reports is that configuration's and no page cache or heap of
// another one is counted in it.
//
// Invariant: a configuration's numbers are medians over the blocks it timed, of the block's
// own work (BlockTiming: the engine's clock, pauses excluded), and the GFLOP/s count only the
// work the half does: attention half 2*S*D*3D (qkv) + 4*S^2*D per segment (QK^T and PV) +
// 2*S*D*D (proj), MLP half 4*S*D*I (fc1, fc2); LayerNorm, rope, GELU and the residual adds are
// time without FLOPs.
// Mutation that would silently break it: timing the run from outside the engine (Step's wall
// clock around the call), which puts the weight stall into both halves' GFLOP/s.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/internal/fsx"
	"github.com/turbospark/inspector/internal/jsonx"
)

// Config is one point of the sweep.
type Config struct {
	Patches   int    `json:"patches"`
	Tile      int    `json:"tile"`
	Residency string `json:"residency"`
}

// Result is what one configuration measured.
type Result struct {
	Config
	Backend         string             `json:"backend"`
	Blocks          int                `json:"blocks_timed"`
	BlockS          float64            `json:"block_s"`           // median wall of a block's own work
	AttentionS      float64            `json:"attention_s"`       // median attention half
	MLPS            float64            `json:"mlp_s"`             // median MLP half
	HostS           float64            `json:"host_s"`            // median host work: the wall less the halves, the weight wait and deepstack
	BlockOverHalves float64            `json:"block_over_halves"` // median of a block's wall over the sum of its two halves
	AttentionGFLOPs float64            `json:"attention_gflops"`
	AttentionOpS    float64            `json:"attention_op_s"`      // median of the attention op alone (CPU: softmax(QK^T)V)
	AttentionOpGF   float64            `json:"attention_op_gflops"` // 4*S^2*D over it
	MLPGFLOPs       float64            `json:"mlp_gflops"`
	WeightStallS    float64            `json:"weight_stall_s"`   // median wait for weights per block
	BytesRead       int64              `json:"bytes_read_block"` // median bytes read per block (pread)
	PeakRSS         int64              `json:"peak_rss_bytes"`
	GEMMs           []GEMMResult       `json:"gemms,omitempty"` // with --gemm
	OpsS            map[string]float64 `json:"ops_s,omitempty"` // median per op kind (synchronous backends: matmul, attention, layernorm, ...)
	// Each timed block's own wall and host work, in block order: whether the first blocks of a
	// process (first touch of its buffers) differ from the rest, which the medians hide.
	BlockWallsS []float64 `json:"block_walls_s"`
	HostWallsS  []float64 `json:"host_walls_s"`
	// With --loops: the CPU backend's parallel loops over the timed blocks, per call site, the
	// most wall first (engine/cpu/loopprof.go).
	Loops []cpu.LoopSite `json:"loops,omitempty"`
}

// GEMMResult is one of the block's matrix products timed alone at rows = patches.
type GEMMResult struct {
	Name   string  `json:"name"`
	Rows   int     `json:"rows"`
	In     int     `json:"in"`
	Out    int     `json:"out"`
	GFLOPs float64 `json:"gflops"` // 2*rows*in*out over the fastest of 5 calls (after one warm-up)
	// The same product with the weight widened to float32 beforehand (a bf16 or f16 checkpoint):
	// what the checkpoint's narrower weights cost or save against float32 ones.
	GFLOPsF32W float64 `json:"gflops_f32_weights,omitempty"`
}

// Flags are what `inspector bench` was asked (the app parses them).
type Flags struct {
	Checkpoint, Backend string
	CPUProfile          string // pprof CPU profile of the timed blocks (one configuration only)
	Patches, Tiles      []int
	Residencies         []string
	Threads, Blocks     int
	GEMM                bool // also time the block's four GEMMs alone at rows = patches
	Loops               bool // also profile the CPU backend's parallel loops (where threads wait)
	One                 bool // child mode: one configuration, its result as JSON on stdout
}

// Run is `inspector bench`: with One, the one configuration in this process, its result as
// JSON on stdout; else every configuration in a child process of its own, the table on stdout,
// and the results (for --json).
func Run(ctx context.Context, f *Flags, stdout io.Writer) ([]Result, error) {
	if f.One {
		res, err := f.runOne(ctx, Config{f.Patches[0], f.Tiles[0], f.Residencies[0]})
		if err != nil {
			return nil, err
		}
		return nil, jsonx.Encode(stdout, res, "")
	}
	if err := f.checkMemory(); err != nil { // every configuration, before the first child starts
		return nil, err
	}
	var results []Result
	for _, p := range f.Patches {
		for _, t := range f.Tiles {
			for _, r := range f.Residencies {
				res, err := f.child(ctx, Config{p, t, r})
				if err != nil {
					return nil, err
				}
				results = append(results, res)
			}
		}
	}
	printBench(stdout, results)
	return results, nil
}

// child runs one configuration in a fresh process of this executable.
func (f *Flags) child(ctx context.Context, c Config) (Result, error) {
	self, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, self, "bench", "--one", "--checkpoint", f.Checkpoint,
		"--patches", strconv.Itoa(c.Patches), "--tile", strconv.Itoa(c.Tile), "--residency", c.Residency,
		"--threads", strconv.Itoa(f.Threads), "--blocks", strconv.Itoa(f.Blocks), "--backend", f.Backend)
	if f.CPUProfile != "" {
		cmd.Args = append(cmd.Args, "--cpuprofile", f.CPUProfile)
	}
	if f.GEMM {
		cmd.Args = append(cmd.Args, "--gemm")
	}
	if f.Loops {
		cmd.Args = append(cmd.Args, "--loops")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("interrupted at %d patches, tile %d, %s", c.Patches, c.Tile, c.Residency)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%d patches, tile %d, %s: %v: %s", c.Patches, c.Tile, c.Residency, err, strings.TrimSpace(stderr.String()))
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		return Result{}, fmt.Errorf("%d patches, tile %d, %s: reading the child's result: %v", c.Patches, c.Tile, c.Residency, err)
	}
	return res, nil
}

// settings are configuration c's engine settings.
func (f *Flags) settings(c Config) (engine.Settings, error) {
	s := engine.DefaultSettings(f.Backend)
	s.Threads, s.TileRows = f.Threads, c.Tile
	var err error
	s.Residency, err = engine.ParseResidency(c.Residency)
	return s, err
}

// estimate is what configuration c holds in a child: the run of its page (the pixels
// Input makes included) and, with --gemm, the largest of the four products' x (on the
// host and in a buffer) and y.
func (f *Flags) estimate(ck *engine.Checkpoint, c Config) (engine.MemoryEstimate, error) {
	s, err := f.settings(c)
	if err != nil {
		return engine.MemoryEstimate{}, err
	}
	est := engine.EstimatePatches(ck, c.Patches, s)
	if f.GEMM {
		cfg := ck.Config
		D, I, rows := int64(cfg.Hidden), int64(cfg.Intermediate), int64(c.Patches)
		est.Scratch += 4 * rows * max(2*D+3*D, 2*I+D, 2*D+I)
		est.Largest = max(est.Largest, 4*rows*max(3*D, I))
	}
	return est, nil
}

// checkMemory refuses, before any child starts, a sweep with a configuration that would not
// fit in memory (a child checks its own again before it makes the page).
func (f *Flags) checkMemory() error {
	ck, err := engine.OpenCheckpoint(f.Checkpoint)
	if err != nil {
		return err
	}
	for _, p := range f.Patches {
		for _, t := range f.Tiles {
			for _, r := range f.Residencies {
				c := Config{p, t, r}
				est, err := f.estimate(ck, c)
				if err != nil {
					return err
				}
				if err := engine.CheckMemory(est, 0); err != nil {
					return fmt.Errorf("--patches %d, tile %d, %s: %w", p, t, r, err)
				}
			}
		}
	}
	return nil
}

// runOne times blocks 0..blocks-1 of one configuration in this process.
func (f *Flags) runOne(ctx context.Context, c Config) (Result, error) {
	ck, err := engine.OpenCheckpoint(f.Checkpoint)
	if err != nil {
		return Result{}, err
	}
	cfg := ck.Config
	est, err := f.estimate(ck, c)
	if err != nil {
		return Result{}, err
	}
	if err := engine.CheckMemory(est, 0); err != nil { // before Input makes the page
		return Result{}, fmt.Errorf("--patches %d, tile %d, %s: %w", c.Patches, c.Tile, c.Residency, err)
	}
	s, err := f.settings(c)
	if err != nil {
		return Result{}, err
	}
	be, name, _, err := backend.Open(s.Backend, s.Threads)
	if err != nil {
		return Result{}, err
	}
	s.Backend = name
	e, err := engine.NewEngine(ck, be, s)
	if err != nil {
		return Result{}, err
	}
	defer e.Close()
	run, err := e.Start(Input(cfg, c.Patches))
	if err != nil {
		return Result{}, err
	}
	defer run.Close()
	n := min(f.Blocks, cfg.Depth)
	if f.CPUProfile != "" {
		stopProfile, err := startCPUProfile(f.CPUProfile)
		if err != nil {
			return Result{}, err
		}
		defer stopProfile()
	}
	loops, err := f.loopProfiler(be)
	if err != nil {
		return Result{}, err
	}
	var wall, att, mlp, wait, read, host, attF, attOpF, overHalves []float64
	ops := map[string][]float64{}
	for i := range n {
		half, op := cfg.AttentionFLOPs(run.Layout.SegmentsOf(i)) // a windowed block's, the windows'
		attF, attOpF = append(attF, half), append(attOpF, op)
		res, err := run.Step(ctx)
		if err != nil {
			return Result{}, err
		}
		t := res.Timing
		wall = append(wall, t.Wall.Seconds())
		att = append(att, t.Attention.Seconds())
		mlp = append(mlp, t.MLP.Seconds())
		wait = append(wait, t.Wait.Seconds())
		read = append(read, float64(t.BytesRead))
		host = append(host, t.Host().Seconds())
		if halves := t.Attention + t.MLP; halves > 0 {
			overHalves = append(overHalves, t.Wall.Seconds()/halves.Seconds())
		}
		for op, d := range t.Ops {
			ops[op] = append(ops[op], d.Seconds())
		}
	}
	var sites []cpu.LoopSite
	if loops != nil { // the timed blocks' loops only (not --gemm's)
		sites = loops.LoopProfile()
		loops.ProfileLoops(false)
	}
	attFLOPs, mlpFLOPs := Median(attF), cfg.MLPFLOPs(c.Patches)
	r := Result{Config: c, Backend: be.Name(), Blocks: n,
		BlockS: Median(wall), AttentionS: Median(att), MLPS: Median(mlp), HostS: Median(host),
		WeightStallS: Median(wait), BytesRead: int64(Median(read)), PeakRSS: engine.PeakRSS(),
		BlockWallsS: wall, HostWallsS: host, Loops: sites}
	if len(overHalves) > 0 { // (a JSON number: never the NaN of an empty median)
		r.BlockOverHalves = Median(overHalves)
	}
	r.AttentionGFLOPs = attFLOPs / r.AttentionS / 1e9
	r.MLPGFLOPs = mlpFLOPs / r.MLPS / 1e9
	if len(ops) > 0 { // op times exist on synchronous backends only
		r.OpsS = map[string]float64{}
		for op, v := range ops {
			r.OpsS[op] = Median(v)
		}
	}
	if r.AttentionOpS = r.OpsS["attention"]; r.AttentionOpS > 0 {
		r.AttentionOpGF = Median(attOpF) / r.AttentionOpS / 1e9
	}
	if f.GEMM {
		if r.GEMMs, err = timeGEMMs(ctx, e, c.Patches); err != nil {
			return Result{}, err
		}
	}
	return r, nil
}

// loopProfiler is the backend's loop profile, turned on, with --loops (nil without); an error
// for a backend that has none (Metal: its work is command buffers, not loops).
func (f *Flags) loopProfiler(be backend.Backend) (loopProfiler, error) {
	if !f.Loops {
		return nil, nil
	}
	lp, ok := be.(loopProfiler)
	if !ok {
		return nil, fmt.Errorf("--loops: the %s backend has no parallel loops to profile (the CPU backend has)", be.Name())
	}
	lp.ProfileLoops(true)
	return lp, nil
}

// loopProfiler is the CPU backend's loop profile (engine/cpu/loopprof.go).
type loopProfiler interface {
	ProfileLoops(on bool)
	LoopProfile() []cpu.LoopSite
}

// BlockFLOPs is the work a block's halves count, for one page of one segment, every block
// attending over the whole page (gpumodel's one modelled block): attention 2*S*D*3D (qkv) +
// 4*S^2*D (QK^T, PV) + 2*S*D*D (proj); MLP 4*S*D*I (6*S*D*I gated).
func BlockFLOPs(cfg engine.Config, patches int) (attention, mlp float64) {
	half, _ := cfg.AttentionFLOPs([]backend.Segment{{Start: 0, End: patches}})
	return half, cfg.MLPFLOPs(patches)
}

// timeGEMMs times block 0's matrix products alone, rows = patches, on the engine's backend.
func timeGEMMs(ctx context.Context, e *engine.Engine, rows int) ([]GEMMResult, error) {
	be, cfg := e.Backend, e.Checkpoint.Config
	w, _, err := e.Res.Block(0)
	if err != nil {
		return nil, err
	}
	defer e.Res.Done(0)
	r := rand.New(rand.NewPCG(2, uint64(rows)))
	var out []GEMMResult
	for _, g := range w.GEMMs(cfg) {
		xv := make([]float32, rows*g.In)
		for i := range xv {
			xv[i] = float32(r.Float64()*2 - 1)
		}
		xb, err := be.Alloc(rows * g.In)
		if err != nil {
			return nil, err
		}
		yb, err := be.Alloc(rows * g.Out)
		if err != nil {
			be.Free(xb)
			return nil, err
		}
		x, y := backend.View{Buf: xb}, backend.View{Buf: yb}
		be.Upload(x, xv)
		flops := 2 * float64(rows) * float64(g.In) * float64(g.Out)
		res := GEMMResult{Name: g.Name, Rows: rows, In: g.In, Out: g.Out}
		best, err := fastestMatMul(ctx, be, y, x, g.W, g.B, rows, g.In, g.Out)
		if err == nil {
			res.GFLOPs = flops / best / 1e9
		}
		// The float32 copy lives in Go memory of its own: only a backend that reads host memory
		// in place during the call (the CPU's) may be handed it; a GPU would wrap it and keep
		// the wrapper past the copy's life.
		if err == nil && g.W.DType != dtype.F32 && be.Caps().Synchronous {
			best, err = fastestMatMul(ctx, be, y, x, engine.WidenedF32(g.W), g.B, rows, g.In, g.Out)
			res.GFLOPsF32W = flops / best / 1e9
		}
		be.Free(xb)
		be.Free(yb)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// fastestMatMul is the fastest of 5 calls of y = x W^T + B (after a warm-up: the first touch
// of the weight's pages), in seconds: on a shared machine interference only ever slows a call
// down, and scripts/bench_torch.py times OpenBLAS the same way. Each call packs the weight
// anew (Commit ends the pass), as a block's products do.
func fastestMatMul(ctx context.Context, be backend.Backend, y, x backend.View, w, b backend.Weight, rows, in, out int) (float64, error) {
	var times []float64
	for range 6 {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		start := time.Now()
		be.MatMul(y, x, w, b, rows, in, out)
		if _, err := be.Commit(); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start).Seconds())
	}
	return slices.Min(times[1:]), nil
}

// Input is a page of patches patches (one image, an h x w grid of merge groups as square
// as the count allows) with pixels drawn from a fixed seed: timing does not depend on values.
func Input(cfg engine.Config, patches int) *engine.Input {
	m := cfg.MergeSize
	groups := patches / (m * m)
	gh := int(math.Sqrt(float64(groups)))
	for groups%gh != 0 {
		gh--
	}
	grid := geom.Grid{T: 1, H: gh * m, W: groups / gh * m}
	r := rand.New(rand.NewPCG(1, uint64(patches)))
	px := make([]float32, patches*cfg.PatchDim())
	for i := range px {
		px[i] = float32(r.Float64()*2 - 1)
	}
	return &engine.Input{Pixels: px, Grids: []geom.Grid{grid}}
}

// Median is the median of v (NaN for none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printBench(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "patches\ttile\tresidency\tbackend\tblock s\tattention half s\tGFLOP/s\tattention op GFLOP/s\tMLP half s\tGFLOP/s\thost ms\tstall ms\tread MiB\tpeak RSS MiB\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.3f\t%.3f\t%.0f\t%.0f\t%.3f\t%.0f\t%.1f\t%.1f\t%.0f\t%.0f\t\n", r.Patches, r.Tile, r.Residency, r.Backend,
			r.BlockS, r.AttentionS, r.AttentionGFLOPs, r.AttentionOpGF, r.MLPS, r.MLPGFLOPs, r.HostS*1e3, r.WeightStallS*1e3,
			float64(r.BytesRead)/(1<<20), float64(r.PeakRSS)/(1<<20))
	}
	tw.Flush()
	for _, r := range results { // where a block's time went, op by op (largest first)
		if len(r.OpsS) == 0 {
			continue
		}
		ops := slices.Collect(maps.Keys(r.OpsS))
		slices.SortFunc(ops, func(a, b string) int { return cmp.Compare(r.OpsS[b], r.OpsS[a]) })
		fmt.Fprintf(w, "%d patches, tile %d, %s: ops ms:", r.Patches, r.Tile, r.Residency)
		for _, op := range ops {
			fmt.Fprintf(w, " %s %.1f", op, r.OpsS[op]*1e3)
		}
		fmt.Fprintln(w)
	}
	for _, r := range results {
		printLoops(w, r)
	}
	for _, r := range results {
		for _, g := range r.GEMMs {
			fmt.Fprintf(w, "GEMM %-5s %dx%dx%d: %.0f GFLOP/s", g.Name, g.Rows, g.In, g.Out, g.GFLOPs)
			if g.GFLOPsF32W > 0 {
				fmt.Fprintf(w, " (float32 weights: %.0f, ratio %.2f)", g.GFLOPsF32W, g.GFLOPs/g.GFLOPsF32W)
			}
			fmt.Fprintln(w)
		}
	}
	if len(results) > 0 { // blocks timed: --blocks, or fewer where the model has fewer
		fmt.Fprintf(w, "median of blocks 0-%d per configuration; each configuration in its own process\n", results[0].Blocks-1)
	}
}

// printLoops prints a configuration's loop profile (--loops): per call site, the wall a block
// and the share of the threads' time the loops left idle, the most wall first.
func printLoops(w io.Writer, r Result) {
	if len(r.Loops) == 0 {
		return
	}
	fmt.Fprintf(w, "%d patches, tile %d, %s: parallel loops over %d blocks on %s (idle: the threads' time in the loop that no task used)\n",
		r.Patches, r.Tile, r.Residency, r.Blocks, r.Backend)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "loops a block\ttasks a loop\twall ms a block\tidle %\t site")
	for _, l := range r.Loops {
		fmt.Fprintf(tw, "%.1f\t%.0f\t%.2f\t%.1f\t %s\n", float64(l.Loops)/float64(r.Blocks), float64(l.Tasks)/float64(max(1, l.Loops)),
			l.Wall.Seconds()*1e3/float64(r.Blocks), 100*l.Idle, l.Site)
	}
	tw.Flush()
}

// startCPUProfile profiles this process into path (written atomically when stopped).
func startCPUProfile(path string) (stop func(), err error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := fsx.WriteAtomic(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			fmt.Fprintln(os.Stderr, "inspector bench: --cpuprofile:", err)
		}
	}, nil
}
