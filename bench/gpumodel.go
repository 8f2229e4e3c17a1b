package bench

// gpumodel.go: `inspector gpumodel`: what the Metal kernels should take on named Apple GPUs,
// per block and per kernel, from the performance model in shaders/model.go, for the engine's
// real dispatches on a checkpoint (the graph runs on metal.NewModel: every dispatch, MLP tile,
// attention split and command buffer a Mac would see, without running one). On a Mac the same
// command also runs the blocks on the GPU and each dispatch alone in its own command buffer,
// and prints the measured times beside the model's.
//
// Invariant: the fraction of FP32 peak counts the block's matrix products and attention only
// (2*rows*in*out per matmul, 4*q*k*hd*heads per attention: what `inspector bench` counts),
// over the block's whole modelled time (LayerNorm, rope and the commits included).
// Mutation that would silently break it: summing the kernels' issued matrix work instead —
// padded tiles and the attention's rescale products would count as useful.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/metal"
	"github.com/turbospark/inspector/selftest"
	"github.com/turbospark/inspector/shaders"
)

// GPUModelFlags are what `inspector gpumodel` was asked (the app parses them).
type GPUModelFlags struct {
	Checkpoint, GPU string
	Patches         []int
	Tile, Blocks    int
}

// ModelBlock is one configuration's per-block numbers on one GPU (modelled or measured).
type ModelBlock struct {
	GPU        string  `json:"gpu"`
	Patches    int     `json:"patches"`
	Measured   bool    `json:"measured"` // the Mac's GPU, not the model
	BlockMS    float64 `json:"block_ms"`
	AttentionM float64 `json:"attention_ms"`
	MLPMS      float64 `json:"mlp_ms"`
	GFLOP      float64 `json:"gflop"`            // matmuls and attention of one block
	Peak       float64 `json:"fraction_of_peak"` // GFLOP / block time / FP32 peak (measured: of the table GPU's)
	Passes     int     `json:"command_buffers"`
	Dispatches int     `json:"dispatches"`
}

// ModelKernel is one kind of dispatch of one block (same kernel and op), summed.
type ModelKernel struct {
	Kernel     string  `json:"kernel"`
	Op         string  `json:"op"`
	Count      int     `json:"count"`
	GFLOP      float64 `json:"gflop"`
	ModelMS    float64 `json:"model_ms"`
	Bound      string  `json:"bound"`
	Peak       float64 `json:"fraction_of_peak"`
	MeasuredMS float64 `json:"measured_ms,omitempty"` // a Mac: each dispatch alone
	DRAMMB     float64 `json:"dram_mb"`               // each operand once
	CacheMB    float64 `json:"cache_mb"`              // as the threads move device memory
	TGMemMB    float64 `json:"threadgroup_mb"`        // through threadgroup memory
}

// GPUNames are the performance model's GPUs, for messages: "M1, M2 Pro, M3 Max, M4 Max".
func GPUNames() string {
	var names []string
	for _, g := range shaders.GPUs {
		names = append(names, strings.SplitN(g.Name, " (", 2)[0])
	}
	return strings.Join(names, ", ")
}

// tableGPU is the GPU of the per-kernel table: --gpu, else this Mac's, else M3 Max.
func (f *GPUModelFlags) tableGPU() shaders.GPU {
	if g, ok := shaders.GPUByName(f.GPU); ok && f.GPU != "" {
		return g
	}
	if selftest.MetalRuns() { // touched here only after a probe child survived it
		if info, err := metal.Device(); err == nil {
			if g, ok := selftest.ModelGPU(info.Name); ok {
				return g
			}
		}
	}
	g, _ := shaders.GPUByName("M3 Max")
	return g
}

// GPUModel is `inspector gpumodel`: the tables on stdout, and what --json writes.
func GPUModel(ctx context.Context, f *GPUModelFlags, stdout io.Writer) (map[string]any, error) {
	ck, err := engine.OpenCheckpoint(f.Checkpoint)
	if err != nil {
		return nil, err
	}
	table := f.tableGPU()
	onMac := selftest.MetalRuns()
	var blocks []ModelBlock
	kernels := map[int][]ModelKernel{}
	for _, p := range f.Patches { // every page checked before the first is made
		s := engine.DefaultSettings(metal.Name)
		s.TileRows = f.Tile
		if err := engine.CheckMemory(engine.EstimatePatches(ck, p, s), 0); err != nil {
			return nil, fmt.Errorf("--patches %d: %w", p, err)
		}
	}
	for _, p := range f.Patches {
		for _, g := range shaders.GPUs {
			be, log := metal.NewModel(g)
			b, recs, err := f.runBlocks(ctx, ck, be, log, p)
			if err != nil {
				return nil, err
			}
			b.GPU = g.Name
			b.Peak = g.FractionOfPeak(b.GFLOP*1e9, time.Duration(b.BlockMS*1e6))
			blocks = append(blocks, b)
			if g.Name == table.Name {
				kernels[p] = kernelTable(g, recs)
			}
		}
		if onMac {
			if err := f.measure(ctx, ck, table, p, &blocks, kernels); err != nil {
				return nil, err
			}
		}
	}
	printGPUModel(stdout, ck.Config, f, table, blocks, kernels, onMac)
	return map[string]any{"checkpoint": f.Checkpoint, "tile": f.Tile,
		"table_gpu": table.Name, "blocks": blocks, "kernels": kernels}, nil
}

// measure runs the blocks on this Mac's GPU (the timings of a normal run), then again with
// each dispatch in a command buffer of its own for the per-kernel times.
func (f *GPUModelFlags) measure(ctx context.Context, ck *engine.Checkpoint, table shaders.GPU, p int,
	blocks *[]ModelBlock, kernels map[int][]ModelKernel) error {
	be, err := metal.New()
	if err != nil {
		return err
	}
	mb, _, err := f.runBlocks(ctx, ck, be, nil, p)
	if err != nil {
		return err
	}
	info, _ := metal.Device()
	mb.GPU, mb.Measured = info.Name, true
	// of the peak of the model's GPU this Mac's was matched to (--gpu, or by name)
	mb.Peak = table.FractionOfPeak(mb.GFLOP*1e9, time.Duration(mb.BlockMS*1e6))
	*blocks = append(*blocks, mb)
	pbe, log, err := metal.NewProfiled(table)
	if err != nil {
		return err
	}
	_, recs, err := f.runBlocks(ctx, ck, pbe, log, p)
	if err != nil {
		return err
	}
	measured := kernelTable(table, recs)
	for i := range kernels[p] {
		for _, m := range measured {
			if m.Kernel == kernels[p][i].Kernel && m.Op == kernels[p][i].Op {
				kernels[p][i].MeasuredMS = m.MeasuredMS
			}
		}
	}
	return nil
}

// runBlocks runs blocks 0..f.Blocks-1 on be (which the engine owns and closes) and returns
// the last block's numbers and, with a log, its dispatches.
func (f *GPUModelFlags) runBlocks(ctx context.Context, ck *engine.Checkpoint, be backend.Backend, log *metal.ModelLog,
	patches int) (ModelBlock, []metal.ModelRecord, error) {
	s := engine.DefaultSettings(metal.Name)
	s.TileRows = f.Tile
	e, err := engine.NewEngine(ck, be, s) // owns be from here: closes it when it fails
	if err != nil {
		return ModelBlock{}, nil, err
	}
	defer e.Close()
	run, err := e.Start(Input(ck.Config, patches))
	if err != nil {
		return ModelBlock{}, nil, err
	}
	defer run.Close()
	var b ModelBlock
	var recs []metal.ModelRecord
	for i := range min(f.Blocks, ck.Config.Depth) {
		mark, passes := 0, 0
		if log != nil {
			mark, passes = log.Mark(), log.Passes
		}
		res, err := run.Step(ctx)
		if err != nil && ctx.Err() != nil {
			return ModelBlock{}, nil, fmt.Errorf("interrupted at %d patches, block %d; no output written", patches, i)
		}
		if err != nil {
			return ModelBlock{}, nil, fmt.Errorf("%d patches, block %d: %w", patches, i, err)
		}
		t := res.Timing
		b = ModelBlock{Patches: patches, AttentionM: engine.Millis(t.Attention), MLPMS: engine.Millis(t.MLP), BlockMS: engine.Millis(t.Attention + t.MLP)}
		if log != nil {
			recs = log.Records[mark:]
			b.Passes, b.Dispatches = log.Passes-passes, len(recs)
		}
	}
	att, mlp := BlockFLOPs(ck.Config, patches)
	b.GFLOP = (att + mlp) / 1e9
	return b, recs, nil
}

// kernelTable sums one block's dispatches per kernel and op.
func kernelTable(g shaders.GPU, recs []metal.ModelRecord) []ModelKernel {
	var out []ModelKernel
	index := map[string]int{}
	for _, r := range recs {
		key := r.Kernel + "\x00" + r.Cost.Op
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, ModelKernel{Kernel: r.Kernel, Op: r.Cost.Op, Bound: r.Estimate.Bound})
		}
		k := &out[i]
		k.Count++
		if strings.HasPrefix(r.Kernel, "matmul") || strings.HasPrefix(r.Kernel, "attention") {
			k.GFLOP += r.Cost.FLOPs / 1e9
		}
		k.ModelMS += engine.Millis(r.Estimate.Time)
		k.MeasuredMS += engine.Millis(r.Measured)
		k.DRAMMB += r.Cost.DRAMBytes / 1e6
		k.CacheMB += r.Cost.CacheBytes / 1e6
		k.TGMemMB += r.Cost.ThreadgroupBytes / 1e6
	}
	for i := range out {
		out[i].Peak = g.FractionOfPeak(out[i].GFLOP*1e9, time.Duration(out[i].ModelMS*1e6))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ModelMS > out[j].ModelMS })
	return out
}

func printGPUModel(w io.Writer, cfg engine.Config, f *GPUModelFlags, table shaders.GPU, blocks []ModelBlock,
	kernels map[int][]ModelKernel, onMac bool) {
	fmt.Fprintf(w, "Metal kernels, per block (%d x %d, %d heads of %d, MLP %d, tile %d): the performance model of shaders/model.go",
		cfg.Depth, cfg.Hidden, cfg.Heads, cfg.HeadDim(), cfg.Intermediate, f.Tile)
	if onMac {
		fmt.Fprint(w, ", and this Mac's GPU measured")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "GPU\tcores\tGHz\tFP32 TFLOP/s\tFP16 TFLOP/s\tDRAM GB/s\t")
	for _, g := range shaders.GPUs {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.1f\t%.1f\t%.0f\t\n", g.Name, g.Cores, g.GHz, g.PeakFP32()/1e12, g.PeakFP16()/1e12, g.DRAMGBs)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "patches\tGPU\t\tblock ms\tattention half\tMLP half\tGFLOP\tof FP32 peak\tcommand buffers\tdispatches\t")
	for _, b := range blocks {
		kind := "model"
		if b.Measured {
			kind = "measured"
		}
		peak := fmt.Sprintf("%.0f%%", 100*b.Peak)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.1f\t%s\t%d\t%d\t\n", b.Patches, b.GPU, kind, b.BlockMS, b.AttentionM,
			b.MLPMS, b.GFLOP, peak, b.Passes, b.Dispatches)
	}
	tw.Flush()
	for _, p := range f.Patches {
		fmt.Fprintf(w, "\nper kernel, block %d at %d patches on %s (FP32 peak %.1f TFLOP/s, %.0f GB/s):\n",
			min(f.Blocks, cfg.Depth)-1, p, table.Name, table.PeakFP32()/1e12, table.DRAMGBs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "kernel\top\tdispatches\tGFLOP\tDRAM MB\tcache MB\ttgmem MB\tmodel ms\tof peak\tbound\t"
		if onMac {
			head += "measured ms\tmodel/measured\t"
		}
		fmt.Fprintln(tw, head)
		for _, k := range kernels[p] {
			peak := "-"
			if k.GFLOP > 0 {
				peak = fmt.Sprintf("%.0f%%", 100*k.Peak)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.1f\t%.1f\t%.1f\t%.3f\t%s\t%s\t", k.Kernel, k.Op, k.Count, k.GFLOP,
				k.DRAMMB, k.CacheMB, k.TGMemMB, k.ModelMS, peak, k.Bound)
			if onMac && k.MeasuredMS > 0 {
				fmt.Fprintf(tw, "%.3f\t%.2f\t", k.MeasuredMS, k.ModelMS/k.MeasuredMS)
			} else if onMac {
				fmt.Fprint(tw, "-\t-\t")
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if !onMac {
		fmt.Fprintln(w, "\nmeasured GPU times: run the same command on a Mac (Apple silicon, macOS 14+)")
	}
}
