package main

import (
	"fmt"
	"io"
	"time"

	"github.com/turbospark/inspector/engine"
)

// report is what --json writes: settings, per-block timings, totals, bytes read, memory.
type report struct {
	Settings settings      `json:"settings"`
	Image    *imageInfo    `json:"image,omitempty"`
	EmbedMS  float64       `json:"embed_ms"`
	Blocks   []blockReport `json:"blocks"`
	MergerMS float64       `json:"merger_ms"`
	Totals   totals        `json:"totals"`
	PeakRSS  int64         `json:"peak_rss_bytes"`
}

type settings struct {
	Checkpoint string `json:"checkpoint"`
	Image      string `json:"image"`
	ModelType  string `json:"model_type"`
	Backend    string `json:"backend"`
	Threads    int    `json:"threads"`
	Residency  string `json:"residency"`
	Slots      int    `json:"slots,omitempty"`
	TileRows   int    `json:"tile_rows"`
	Patches    int    `json:"patches"`
	Grid       [3]int `json:"grid_thw"`
}

type imageInfo struct {
	Width         int `json:"width"`
	Height        int `json:"height"`
	ResizedWidth  int `json:"resized_width"`
	ResizedHeight int `json:"resized_height"`
}

type blockReport struct {
	Block       int     `json:"block"`
	WaitMS      float64 `json:"wait_ms"`
	AttentionMS float64 `json:"attention_ms"`
	MLPMS       float64 `json:"mlp_ms"`
	DeepstackMS float64 `json:"deepstack_ms,omitempty"`
	WallMS      float64 `json:"wall_ms"`
	BytesRead   int64   `json:"bytes_read"`
	MeanChange  float64 `json:"mean_change"`
}

type totals struct {
	WallMS      float64 `json:"wall_ms"`
	WaitMS      float64 `json:"wait_ms"`
	AttentionMS float64 `json:"attention_ms"`
	MLPMS       float64 `json:"mlp_ms"`
	BytesRead   int64   `json:"bytes_read"`
	WeightBytes int64   `json:"weight_bytes"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func newReport(eng *engine.Engine, in *engine.Input, f *runFlags) *report {
	g := in.Grids[0]
	threads := 0
	if t, ok := eng.Backend.(interface{ Threads() int }); ok {
		threads = t.Threads()
	}
	r := &report{Settings: settings{Checkpoint: f.checkpoint, Image: f.image, ModelType: eng.Checkpoint.Config.ModelType,
		Backend: eng.Backend.Name(), Threads: threads, Residency: string(eng.Opts.Residency), TileRows: eng.Opts.TileRows,
		Patches: g.Patches(), Grid: [3]int{g.T, g.H, g.W}}}
	if eng.Opts.Residency == engine.Pread {
		r.Settings.Slots = eng.Opts.Slots
	}
	if p := in.Image; p != nil {
		r.Image = &imageInfo{p.OrigW, p.OrigH, p.Resized.W, p.Resized.H}
	}
	r.Totals.WeightBytes = eng.Checkpoint.VisionBytes()
	return r
}

func (r *report) finish(run *engine.Run, wall time.Duration) {
	r.EmbedMS = ms(run.EmbedTime)
	r.MergerMS = ms(run.MergerTime)
	for _, t := range run.Timings {
		b := blockReport{Block: t.Block, WaitMS: ms(t.Wait), AttentionMS: ms(t.Attention), MLPMS: ms(t.MLP),
			DeepstackMS: ms(t.Deepstack), WallMS: ms(t.Wall), BytesRead: t.BytesRead, MeanChange: run.MeanChange(t.Block)}
		r.Blocks = append(r.Blocks, b)
		r.Totals.WaitMS += b.WaitMS
		r.Totals.AttentionMS += b.AttentionMS
		r.Totals.MLPMS += b.MLPMS
		r.Totals.BytesRead += b.BytesRead
	}
	r.Totals.WallMS = ms(wall)
	r.PeakRSS = peakRSS()
}

func printHeader(w io.Writer, r *report) {
	s := r.Settings
	fmt.Fprintf(w, "%s on %s, residency %s, tile %d rows, %d patches (grid %dx%dx%d)\n",
		s.ModelType, s.Backend, s.Residency, s.TileRows, s.Patches, s.Grid[0], s.Grid[1], s.Grid[2])
	fmt.Fprintf(w, "%5s %10s %10s %10s %10s %10s %10s\n", "block", "wait ms", "attn ms", "mlp ms", "wall ms", "read", "change")
}

// readText is the bytes a block pread; a mapped block reads through page faults instead.
func readText(t engine.BlockTiming, mode string) string {
	if mode == string(engine.Mapped) {
		return "mapped"
	}
	return humanBytes(t.BytesRead)
}

func printBlock(w io.Writer, res engine.BlockResult, mode string) {
	t := res.Timing
	var change float64
	for _, c := range res.Stats.Change {
		change += float64(c)
	}
	change /= float64(max(len(res.Stats.Change), 1))
	fmt.Fprintf(w, "%5d %10.1f %10.1f %10.1f %10.1f %10s %10.4f\n", t.Block, ms(t.Wait), ms(t.Attention), ms(t.MLP),
		ms(t.Wall), readText(t, mode), change)
}

func printTotals(w io.Writer, r *report) {
	t := r.Totals
	fmt.Fprintf(w, "%5s %10.1f %10.1f %10.1f %10.1f %10s\n", "total", t.WaitMS, t.AttentionMS, t.MLPMS, t.WallMS, humanBytes(t.BytesRead))
	fmt.Fprintf(w, "embed %.1f ms, merger %.1f ms, vision weights %s, peak RSS %s\n",
		r.EmbedMS, r.MergerMS, humanBytes(t.WeightBytes), humanBytes(r.PeakRSS))
}
