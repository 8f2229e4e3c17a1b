package ui

// follow_bench_test.go times what following the mouse costs the window on a page of the 8B
// tower's shape: a 64 x 80 grid (5,120 patches, one segment) on a 1280 x 1024 page, D = 1152
// in 16 heads of 72, one block of random q|k. Each iteration moves the query to another
// patch and redraws, reported as ms per hover:
//
//   - BenchmarkFollowOverlayHead8B / Mean8B: the image panel alone — the attention row (one
//     head, or the mean of heads) and the overlay composed over the page, the legend, the
//     marks;
//   - BenchmarkFollowWindowHead8B / Mean8B: everything a hover redraws (Inspector.SelectQuery):
//     the overlay, the head grid's 16 thumbnails, the top-k list, the other panels.
//
// Invariant: every iteration asks for a query it has not asked for before (so no cached row
// answers it) on the full-size page. The mutation that would silently break it: hovering the
// same patch each time — the row cache would answer and the numbers would time nothing.

import (
	"math/rand/v2"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/probe"
)

// snapshot8B is a loaded run of the 8B's shape with one block of random q|k.
func snapshot8B(b *testing.B) *Snapshot {
	b.Helper()
	lay, err := geom.NewLayout(2, []geom.Grid{{T: 1, H: 64, W: 80}})
	if err != nil {
		b.Fatal(err)
	}
	st := probe.NewStore(lay, 16, 72)
	rng := rand.New(rand.NewPCG(8, 8))
	S := lay.Rows()
	qk := make([]float32, S*2*st.Hidden)
	for i := range qk {
		qk[i] = float32(rng.NormFloat64())
	}
	st.AddQK(qk)
	rgb := &imageproc.RGB{W: 80 * 16, H: 64 * 16, Pix: make([]uint8, 80*16*64*16*3)}
	for i := range rgb.Pix {
		rgb.Pix[i] = uint8(rng.IntN(256))
	}
	norm := make([]float32, S)
	return &Snapshot{Gen: 1, CheckpointDir: "8b", ImagePath: "page.png",
		Config: engine.Config{Depth: 27, Hidden: 1152, Heads: 16, PatchSize: 16, MergeSize: 2, TemporalPatchSize: 2},
		Page:   &imageproc.Page{Resized: rgb}, Layout: lay, Probes: st, Next: 1,
		Timings: []engine.BlockTiming{{}}, Stats: []probe.PatchStats{{Norm: norm, Mean: norm, MaxAbs: norm, Change: norm}}}
}

// benchFollow times hovers over new patches with head (-1: the mean); window: every panel.
func benchFollow(b *testing.B, head int, window bool) {
	test.NewTempApp(b)
	win := test.NewWindow(nil)
	defer win.Close()
	ui := make(chan func(), 64)
	ctl := NewController(func(f func()) { ui <- f }, cpuOnly)
	defer ctl.Close()
	in := NewInspector(win, ctl, nil)
	in.setSnapshot(snapshot8B(b))
	for in.maps.rows.MeasuringHeads() || in.maps.rows.Busy() { // the head statistics, once per run: not timed
		(<-ui)()
	}
	in.Sel.Head = head
	in.Sel.Overlay = OverlayAttention
	S := in.Snap.Layout.Rows()
	q := 0
	b.ResetTimer()
	for b.Loop() {
		q = (q + 977) % S // 977 is prime to 5,120: 5,120 hovers before a repeat
		if window {
			in.SelectQuery(q)
		} else {
			in.Sel.Query = q
			in.panels.image.refresh()
		}
		for in.maps.rows.Busy() { // the rows are computed off the UI goroutine: until they land and are drawn
			(<-ui)()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/hover")
}

func BenchmarkFollowOverlayHead8B(b *testing.B) { benchFollow(b, 3, false) }
func BenchmarkFollowOverlayMean8B(b *testing.B) { benchFollow(b, -1, false) }
func BenchmarkFollowWindowHead8B(b *testing.B)  { benchFollow(b, 3, true) }
func BenchmarkFollowWindowMean8B(b *testing.B)  { benchFollow(b, -1, true) }
