package record

// report.go is the record of a run that --json writes and the app exports: settings,
// per-block timings, totals, bytes read and peak memory, as JSON or CSV.
//
// Invariant: totals are the sums of the per-block rows they sit under. The mutation that
// would silently break it: adding the deepstack time into the MLP total but not the rows.

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"runtime"
	"strconv"
	"time"

	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/guard"
	"github.com/turbospark/inspector/engine/tower"
	"golang.org/x/sys/unix"
)

// Report is a run's settings and timings.
type Report struct {
	Settings ReportSettings `json:"settings"`
	Image    *ReportImage   `json:"image,omitempty"`
	EmbedMS  float64        `json:"embed_ms"`
	EmbedAt  float64        `json:"embed_at_ms"` // when it began, ms since the run started
	Blocks   []ReportBlock  `json:"blocks"`
	MergerMS float64        `json:"merger_ms"`
	MergerAt float64        `json:"merger_at_ms,omitempty"`
	Totals   ReportTotals   `json:"totals"`
	PeakRSS  int64          `json:"peak_rss_bytes"`
	// NonFinite is where the first NaN or Inf appeared (absent when none did).
	NonFinite *guard.NonFinite `json:"non_finite,omitempty"`
	// Notes are what the session said of the run (the image, the probes turned off, ...).
	Notes []string `json:"notes,omitempty"`
}

// ReportSettings are what the run was asked to do.
type ReportSettings struct {
	Checkpoint string `json:"checkpoint"`
	Image      string `json:"image"`
	ModelType  string `json:"model_type"`
	Backend    string `json:"backend"`
	// BackendNote says why the run is not on the backend asked for ("" when it is).
	BackendNote string `json:"backend_note,omitempty"`
	Threads     int    `json:"threads"`
	Residency   string `json:"residency"`
	Slots       int    `json:"slots,omitempty"`
	TileRows    int    `json:"tile_rows"`
	Patches     int    `json:"patches"`
	Grid        [3]int `json:"grid_thw"`
	// Taps are the taps kept per block (engine/tower/tap.go); with ffn_act the MLP half runs one pass per tile.
	Taps string `json:"taps,omitempty"`
	// Ablate is the heads ablated (BLOCK:HEAD pairs) and AblateMode how ("zero" or "mean").
	Ablate     string `json:"ablate,omitempty"`
	AblateMode string `json:"ablate_mode,omitempty"`
	// Mask is the patches occluded at the input (rect:x0,y0,x1,y1 or rows:...).
	Mask string `json:"mask,omitempty"`
	// KeyMask is the patches no query attends to from a block on (x0,y0,x1,y1@B or rows:...@B).
	KeyMask string `json:"key_mask,omitempty"`
	// KeepTop is the token drop (K@B, or random:K@B).
	KeepTop string `json:"keep_top,omitempty"`
	// PatchFrom is the activation patch (IMAGE:blocks.B.out@PATCHES or IMAGE:blocks.B.attn.hH@PATCHES).
	PatchFrom string `json:"patch_from,omitempty"`
	// Interventions names every intervention of the run, in one order (Settings.Interventions):
	// the one field a new tenant needs nothing added for ("scale heads 1:2=0.5").
	Interventions []string `json:"interventions,omitempty"`
}

// ReportImage is the image before and after smart_resize.
type ReportImage struct {
	Width         int `json:"width"`
	Height        int `json:"height"`
	ResizedWidth  int `json:"resized_width"`
	ResizedHeight int `json:"resized_height"`
}

// ReportBlock is one block's row.
type ReportBlock struct {
	Block       int        `json:"block"`
	WaitMS      float64    `json:"wait_ms"`
	AttentionMS float64    `json:"attention_ms"`
	MLPMS       float64    `json:"mlp_ms"`
	DeepstackMS float64    `json:"deepstack_ms,omitempty"`
	WallMS      float64    `json:"wall_ms"`
	BytesRead   int64      `json:"bytes_read"`
	MeanChange  jsonNumber `json:"mean_change"` // null when not finite
	// When the block and its two passes began, in ms since the run started (a timeline:
	// pauses between steps are in it).
	AtMS          float64 `json:"at_ms"`
	AttentionAtMS float64 `json:"attention_at_ms"`
	MLPAtMS       float64 `json:"mlp_at_ms"`
	DeepstackAtMS float64 `json:"deepstack_at_ms,omitempty"`
}

// ReportTotals sum the block rows.
type ReportTotals struct {
	WallMS      float64 `json:"wall_ms"`
	WaitMS      float64 `json:"wait_ms"`
	AttentionMS float64 `json:"attention_ms"`
	MLPMS       float64 `json:"mlp_ms"`
	BytesRead   int64   `json:"bytes_read"`
	WeightBytes int64   `json:"weight_bytes"`
}

// Millis is a duration in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// NewReport records a run's settings; checkpoint and image name the inputs.
func NewReport(e *tower.Engine, in *ckpt.Input, checkpoint, image string) *Report {
	g := in.Grids[0]
	threads := e.Backend.Caps().Threads
	r := &Report{Settings: ReportSettings{Checkpoint: checkpoint, Image: image, ModelType: e.Checkpoint.Config.ModelType,
		Backend: e.Backend.Name(), Threads: threads, Residency: string(e.Settings.Residency), TileRows: e.Settings.TileRows,
		Patches: g.Patches(), Grid: [3]int{g.T, g.H, g.W}, Taps: e.Settings.Keep.Taps.String()}}
	if e.Settings.Residency == ckpt.Pread {
		r.Settings.Slots = e.Settings.Slots
	}
	if a := e.Settings.Ablate; !a.None() {
		r.Settings.Ablate, r.Settings.AblateMode = a.Heads, a.ModeOrZero()
	}
	r.Settings.Mask = string(e.Settings.Mask)
	r.Settings.KeyMask = e.Settings.KeyMask.Spec()
	r.Settings.KeepTop = e.Settings.KeepTop.Spec()
	r.Settings.PatchFrom = e.Settings.PatchFrom
	for _, iv := range e.Settings.Interventions() {
		r.Settings.Interventions = append(r.Settings.Interventions, iv.Name)
	}
	if p := in.Image; p != nil {
		r.Image = &ReportImage{p.OrigW, p.OrigH, p.Resized.W, p.Resized.H}
	}
	r.Totals.WeightBytes = e.Checkpoint.VisionBytes()
	return r
}

// Finish fills the block rows and totals from the run. The total wall time is the work's own: the embedding, every block's wall time and the
// merger, never the time a user paused between steps.
func (r *Report) Finish(run *tower.Run) {
	r.EmbedMS, r.EmbedAt = Millis(run.EmbedTime), Millis(run.EmbedAt)
	r.MergerMS, r.MergerAt = Millis(run.MergerTime), Millis(run.MergerAt)
	r.Blocks, r.Totals.WaitMS, r.Totals.AttentionMS, r.Totals.MLPMS, r.Totals.BytesRead = nil, 0, 0, 0, 0
	for _, t := range run.Timings {
		b := ReportBlock{Block: t.Block, WaitMS: Millis(t.Wait), AttentionMS: Millis(t.Attention), MLPMS: Millis(t.MLP),
			DeepstackMS: Millis(t.Deepstack), WallMS: Millis(t.Wall), BytesRead: t.BytesRead, MeanChange: jsonNumber(run.MeanChange(t.Block)),
			AtMS: Millis(t.At), AttentionAtMS: Millis(t.AttentionAt), MLPAtMS: Millis(t.MLPAt),
			DeepstackAtMS: Millis(t.DeepstackAt)}
		r.Blocks = append(r.Blocks, b)
		r.Totals.WaitMS += b.WaitMS
		r.Totals.AttentionMS += b.AttentionMS
		r.Totals.MLPMS += b.MLPMS
		r.Totals.BytesRead += b.BytesRead
	}
	wall := run.EmbedTime + run.MergerTime
	for _, t := range run.Timings {
		wall += t.Wall
	}
	r.Totals.WallMS = Millis(wall)
	r.PeakRSS = PeakRSS()
	r.NonFinite = run.NonFinite
}

// SpanMS is the run's host-clock span, from the embedding's start to the merger's end: the
// work plus whatever ran between its parts (host work, the window's time, a user's pauses).
// Zero before the merger ran.
func (r *Report) SpanMS() float64 {
	if r.MergerAt == 0 {
		return 0
	}
	return r.MergerAt + r.MergerMS - r.EmbedAt
}

// WriteCSV writes one row per block with a header.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"block", "wait_ms", "attention_ms", "mlp_ms", "deepstack_ms", "wall_ms", "bytes_read", "mean_change"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, b := range r.Blocks {
		cw.Write([]string{strconv.Itoa(b.Block), f(b.WaitMS), f(b.AttentionMS), f(b.MLPMS), f(b.DeepstackMS), f(b.WallMS),
			strconv.FormatInt(b.BytesRead, 10), strconv.FormatFloat(float64(b.MeanChange), 'g', 6, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// PeakRSS is the process's peak resident set in bytes (ru_maxrss: KiB on Linux, bytes on macOS).
func PeakRSS() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}

// jsonNumber is a float64 that a JSON report can always hold: NaN and ±Inf are written as null
// (encoding/json refuses them, which would lose the whole report).
type jsonNumber float64

// MarshalJSON writes the number, or null when it is not finite.
func (n jsonNumber) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}
