// windowed_test.go: window attention's contract, before any family has it: the graph and
// every probe take a block's attention segments from one place (geom.Layout.SegmentsOf), so
// a windowed block's heatmap, matrix, column and rollout are those of the attention the block
// computed. The check needs no transformers fixture: the kept attn tap (before proj) must be
// the probe's attention row times the kept v, head by head.
package tower_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/internal/kernel"
	"github.com/turbospark/inspector/engine/probe"
	"github.com/turbospark/inspector/engine/tower"
	"github.com/turbospark/inspector/internal/numcheck"
)

var windowedBlocks = []int{1, 2} // of the tiny tower's 4: blocks 0 and 3 stay whole-frame

// tinyWindows cuts every frame into windows of 12 rows (three merge units), the last of a
// frame shorter, as Qwen2.5-VL's windows are at the right and bottom edges.
func tinyWindows(depth int) func(lay *geom.Layout) error {
	return func(lay *geom.Layout) error {
		var ws []backend.Segment
		for _, f := range lay.Segments {
			for s := f.Start; s < f.End; s += 12 {
				ws = append(ws, backend.Segment{Start: s, End: min(s+12, f.End)})
			}
		}
		return lay.SetWindows(ws, windowedBlocks, depth)
	}
}

// frameAttention is the graph's mutation: every block attends within whole frames, whatever
// the layout says.
type frameAttention struct {
	backend.Backend
	frames []backend.Segment
}

func (m *frameAttention) Attention(o, q, k, v backend.View, stride int, segs []backend.Segment, heads, headDim int, scale float32) {
	m.Backend.Attention(o, q, k, v, stride, m.frames, heads, headDim, scale)
}

// startWindowed runs the tiny tower on be with blocks 1 and 2 windowed, q, k, v and attn kept.
func startWindowed(t *testing.T, be backend.Backend) *tower.Run {
	t.Helper()
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	eng, err := tower.NewEngine(ck, be, tower.Settings{Keep: tower.Keep{Attention: true, Taps: tower.TapSetOf(tower.TapV, tower.TapAttn)}})
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	tower.SetWindows(eng, tinyWindows(ck.Config.Depth))
	run, err := eng.Start(fx.input(t))
	must(t, err)
	t.Cleanup(run.Close)
	must(t, run.RunAll(context.Background()))
	return run
}

var windowQueries = []int{0, 11, 12, 23, 30, 39, 40, 100, 131, 175}

// attnOffRows is the largest relative difference, over heads and windowQueries, between the
// kept attn rows of block and sum_j row[j] * v_j, row from rows (a probe's attention row).
func attnOffRows(t *testing.T, run *tower.Run, block int, rows func(block, head, q int) ([]float32, error)) float64 {
	t.Helper()
	p := run.Probes
	vt, err := p.Tap(tower.TapV.String(), block)
	must(t, err)
	at, err := p.Tap(tower.TapAttn.String(), block)
	must(t, err)
	D, hd := p.Hidden, p.HeadDim
	worst := 0.0
	for h := range p.Heads {
		for _, q := range windowQueries {
			row, err := rows(block, h, q)
			must(t, err)
			var diff, norm float64
			for d := range hd {
				var want float64
				for j, a := range row {
					want += float64(a) * float64(vt[j*D+h*hd+d])
				}
				diff = max(diff, math.Abs(float64(at[q*D+h*hd+d])-want))
				norm = max(norm, math.Abs(want))
			}
			worst = max(worst, diff/norm)
		}
	}
	return worst
}

func TestWindowedBlockRowsMatchTheGraph(t *testing.T) {
	run := startWindowed(t, cpuBackend())
	lay := run.Layout
	if w, f := lay.SegmentOf(1, 30), lay.FrameOf(30); w == f || !lay.Windowed(1) || lay.Windowed(0) {
		t.Fatalf("block 1's segment of row 30 is %v, its frame %v: the test needs a window smaller than the frame", w, f)
	}
	for b := range run.Next() {
		if off := attnOffRows(t, run, b, run.Probes.AttentionRow); off > 1e-5 {
			t.Errorf("block %d (windowed %v): the kept attn is off the probe's rows times v by %.2e", b, lay.Windowed(b), off)
		}
		for _, q := range windowQueries {
			row, err := run.Probes.AttentionRow(b, 0, q)
			must(t, err)
			seg := lay.SegmentOf(b, q)
			for j, a := range row {
				if (j < seg.Start || j >= seg.End) && a != 0 {
					t.Fatalf("block %d query %d: %g at key %d outside its segment %v", b, q, a, j, seg)
				}
			}
		}
	}

	// The probes' mutation: a store that takes whole frames for every block reads the same q
	// and k, and the check must see its rows disagree with the windowed blocks' attn.
	frames, err := geom.NewLayout(lay.Merge, lay.Grids)
	must(t, err)
	mut := probe.NewStore(frames, run.Probes.Heads, run.Probes.HeadDim)
	for b := range run.Next() {
		qk, err := run.Probes.QK(b)
		must(t, err)
		mut.AddQK(qk)
	}
	for _, b := range windowedBlocks {
		if off := attnOffRows(t, run, b, mut.AttentionRow); off < 1e-2 {
			t.Errorf("block %d: probes that ignore the windows are off by only %.2e: the check cannot see them", b, off)
		}
	}
}

// The graph's mutation: a windowed block run with whole-frame attention disagrees with the
// probes' windowed rows.
func TestWindowedCheckSeesFrameAttention(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	lay, err := geom.NewLayout(ck.Config.MergeSize, fx.input(t).Grids)
	must(t, err)
	run := startWindowed(t, &frameAttention{Backend: cpuBackend(), frames: lay.Segments})
	for b := range run.Next() {
		off := attnOffRows(t, run, b, run.Probes.AttentionRow)
		if windowed := slices.Contains(windowedBlocks, b); windowed && off < 1e-2 {
			t.Errorf("block %d ran whole-frame attention, and the check is off by only %.2e", b, off)
		} else if !windowed && off > 1e-5 {
			t.Errorf("block %d: %.2e", b, off)
		}
	}
}

// Every probe of a windowed block agrees with its one-query row: the batched rows (packed
// keys), every head's rows and their mean, the column of a key, the block's matrix over a
// window, and the fused matrix over the frame (block-diagonal).
func TestWindowedProbesAgree(t *testing.T) {
	run := startWindowed(t, cpuBackend())
	kernel.EachKernel(func(name string) { t.Run(name, func(t *testing.T) { windowedProbesAgree(t, run) }) })
}

func windowedProbesAgree(t *testing.T, run *tower.Run) {
	p, lay, ctx := run.Probes, run.Layout, context.Background()
	S := lay.Rows()
	for _, b := range []int{0, 1} {
		one := map[[2]int][]float32{} // (head, query) -> AttentionRow
		for h := range p.Heads {
			for q := range S {
				row, err := p.AttentionRow(b, h, q)
				must(t, err)
				one[[2]int{h, q}] = row
			}
			must(t, p.AttentionRows(ctx, b, h, windowQueries, func(q int, row []float32) {
				if d := numcheck.MaxAbs(row, one[[2]int{h, q}]); d > 1e-6 {
					t.Errorf("block %d head %d query %d: batched row off the one-query row by %.2e", b, h, q, d)
				}
			}))
			for _, key := range []int{0, 12, 30, 175} {
				col, err := p.AttentionColumn(ctx, b, h, key)
				must(t, err)
				for q := range S {
					if d := math.Abs(float64(col[q] - one[[2]int{h, q}][key])); d > 1e-6 {
						t.Fatalf("block %d head %d key %d query %d: column %g, row %g", b, h, key, q, col[q], one[[2]int{h, q}][key])
					}
				}
			}
		}
		for _, q := range windowQueries {
			rows, mean, err := p.QueryRows(ctx, b, q)
			must(t, err)
			for h, row := range rows {
				if d := numcheck.MaxAbs(row, one[[2]int{h, q}]); d > 1e-6 {
					t.Errorf("block %d query %d head %d: QueryRows off by %.2e", b, q, h, d)
				}
			}
			if len(mean) != S {
				t.Fatalf("mean of %d", len(mean))
			}
		}
		seg := lay.SegmentOf(b, 30)
		L := seg.End - seg.Start
		m, err := p.AttentionMatrix(ctx, b, 0, seg, probe.Whole(L), L)
		must(t, err)
		for i := range L {
			for j := range L {
				if d := math.Abs(float64(m.Vals[i*L+j] - one[[2]int{0, seg.Start + i}][seg.Start+j])); d > 1e-6 {
					t.Fatalf("block %d matrix over %v, (%d, %d): off by %.2e", b, seg, i, j, d)
				}
			}
		}
		frame := lay.FrameOf(30)
		Lf := frame.End - frame.Start
		f, err := p.FusedAttention(ctx, b, frame, 0, probe.FuseMean)
		must(t, err)
		for i := range Lf {
			for j := range Lf {
				if d := math.Abs(float64(f[i*Lf+j] - one[[2]int{0, frame.Start + i}][frame.Start+j])); d > 1e-6 {
					t.Fatalf("block %d fused matrix over %v, (%d, %d): off by %.2e", b, frame, i, j, d)
				}
			}
		}
	}
}

// Rollout through windowed blocks is the product of the blocks' Â over the frame, each from
// the mean rows (zero between a windowed block's windows), and the rollout table gives it too.
func TestWindowedRollout(t *testing.T) {
	run := startWindowed(t, cpuBackend())
	kernel.EachKernel(func(name string) { t.Run(name, func(t *testing.T) { windowedRollout(t, run) }) })
}

func windowedRollout(t *testing.T, run *tower.Run) {
	p, lay, ctx := run.Probes, run.Layout, context.Background()
	upTo := run.Next() - 1
	for _, discard := range []float64{0, 0.5} {
		o := probe.RolloutOptions{Fusion: probe.FuseMean, Discard: discard}
		tab, err := p.NewRolloutTable(probe.TableOptions{Rollout: o, History: 1 << 30})
		must(t, err)
		must(t, tab.Build(ctx, upTo, nil))
		for _, q := range []int{0, 30, 100} {
			got, err := p.Rollout(ctx, q, upTo, o)
			must(t, err)
			if discard == 0 {
				want := denseRollout(t, p, lay, q, upTo)
				if d := numcheck.MaxAbs(got, want); d > 1e-6 {
					t.Errorf("query %d: rollout off the dense product by %.2e", q, d)
				}
			}
			row, err := tab.RowAt(q, upTo)
			must(t, err)
			if d := numcheck.MaxAbs(row, got); d > 1e-5 {
				t.Errorf("discard %v query %d: the table's row off Rollout by %.2e", discard, q, d)
			}
		}
	}
}

// denseRollout is row q of Â_upTo ... Â_0 over q's frame, Â_l = rownorm(0.5*mean_h A_l + 0.5*I)
// with A_l's rows the mean rows, in float64.
func denseRollout(t *testing.T, p *probe.Store, lay *geom.Layout, q, upTo int) []float32 {
	t.Helper()
	f := lay.FrameOf(q)
	L := f.End - f.Start
	v := make([]float64, L)
	v[q-f.Start] = 1
	for l := upTo; l >= 0; l-- {
		out := make([]float64, L)
		for i := range L {
			if v[i] == 0 {
				continue
			}
			m, err := p.AttentionRowMean(l, f.Start+i)
			must(t, err)
			var sum float64
			for _, x := range m[f.Start:f.End] {
				sum += float64(x)
			}
			w := v[i] / (0.5*sum + 0.5)
			for j, x := range m[f.Start:f.End] {
				out[j] += 0.5 * w * float64(x)
			}
			out[i] += 0.5 * w
		}
		v = out
	}
	res := make([]float32, lay.Rows())
	for j, x := range v {
		res[f.Start+j] = float32(x)
	}
	return res
}
