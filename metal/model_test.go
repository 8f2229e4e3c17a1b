package metal

// model_test.go: the watchdog splits and the model backend, on every platform (nothing runs:
// the model gives each pass its time).

import (
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/shaders"
)

// covers checks that pieces tile [start, end) in order.
func covers(t *testing.T, what string, pieces []backend.Segment, start, end int) {
	t.Helper()
	at := start
	for i, p := range pieces {
		if p.Start != at || p.End <= p.Start {
			t.Fatalf("%s: piece %+v after %d: the pieces must tile [%d, %d) in order", what, p, at, start, end)
		}
		if first := pieces[0].End - pieces[0].Start; p.End-p.Start > first || (i < len(pieces)-1 && p.End-p.Start != first) {
			t.Fatalf("%s: pieces %v: want all but the last of one length, the last no longer", what, pieces)
		}
		at = p.End
	}
	if at != end {
		t.Fatalf("%s: pieces end at %d, want %d", what, at, end)
	}
}

// At 65,536 patches (one image, the 8B tower's heads) every attention and matmul dispatch fits
// the watchdog budget on the slowest GPU of the model.
func TestSplitsFitTheWatchdog(t *testing.T) {
	const S, heads = 65536, 16
	o := shaders.Operand{Handle: 1}
	for _, hd := range []int{72, 40, 128} {
		for _, seg := range []backend.Segment{{Start: 0, End: S}, {Start: 100, End: 133}, {Start: 5, End: 6}} {
			pieces := splitQueries(shaders.AttentionKernel(hd), seg, heads, hd, dispatchBudget)
			covers(t, "attention", pieces, seg.Start, seg.End)
			for _, p := range pieces {
				d := shaders.Attention(o, o, o, o, 3*heads*hd, seg, p, S, heads, hd, 0.1)
				if e := slowestGPU.Estimate(d.Cost).Time; e > dispatchBudget && p.End-p.Start > shaders.AttentionQueryTile(d.Kernel) {
					t.Errorf("hd %d, %+v: piece %+v modelled at %v on %s, budget %v", hd, seg, p, e, slowestGPU.Name, dispatchBudget)
				}
			}
			if seg.End-seg.Start == S && len(pieces) < 20 {
				t.Errorf("hd %d: %d pieces for 65,536 patches: one dispatch would run for seconds", hd, len(pieces))
			}
		}
	}
	// Both matmul kernels: the simdgroup one, and the scalar fallback, each split by its own
	// modelled time (the scalar one is slower: at a budget where the rounding shows, it gets
	// more pieces).
	for _, s := range [][3]int{{S, 1152, 3456}, {S, 4304, 1152}, {7, 1152, 4304}} {
		simd := func(rows int) string { return shaders.MatMulKernel(shaders.BF16, rows, s[2]) }
		scalar := func(int) string { return shaders.MatMulScalarKernel(shaders.BF16) }
		for _, budget := range []time.Duration{dispatchBudget, 10 * time.Millisecond} {
			var n [2]int
			for i, kernel := range []func(int) string{simd, scalar} {
				pieces := splitRows(kernel, s[0], s[1], s[2], shaders.BF16, budget)
				covers(t, "matmul", pieces, 0, s[0])
				n[i] = len(pieces)
				for _, p := range pieces {
					rows := p.End - p.Start
					d := shaders.MatMulOn(kernel(rows), o, o, o, o, shaders.BF16, shaders.BF16, rows, s[1], s[2], shaders.Epilogue{})
					if e := slowestGPU.Estimate(d.Cost).Time; e > budget {
						t.Errorf("%s %v: rows %+v modelled at %v, budget %v", d.Kernel, s, p, e, budget)
					}
				}
			}
			t.Logf("matmul %v, budget %v: %d pieces on the simdgroup kernel, %d on the scalar one", s, budget, n[0], n[1])
			if s[0] == S && budget < dispatchBudget && n[1] <= n[0] {
				t.Errorf("matmul %v: the scalar kernel, slower by the model, got %d pieces, the simdgroup one %d", s, n[1], n[0])
			}
		}
	}
}

// testModel is a model backend with buffers and weights for ops of the given sizes.
type testModel struct {
	t   *testing.T
	b   *Backend
	log *ModelLog
}

func newTestModel(t *testing.T, g shaders.GPU) *testModel {
	b, log := NewModel(g)
	t.Cleanup(func() { b.Close() })
	return &testModel{t, b, log}
}

func (m *testModel) buf(n int) backend.View {
	buf, err := m.b.Alloc(n)
	if err != nil {
		m.t.Fatal(err)
	}
	return backend.View{Buf: buf}
}

// weight is a zero BF16 weight of n elements in page-aligned memory (bound in place).
func (m *testModel) weight(n int) backend.Weight {
	testRegionIDs++
	r := &backend.Region{ID: testRegionIDs, Bytes: pageMem(m.t, 2*n)[:2*n], Mapped: true}
	return backend.Weight{Name: "w", DType: dtype.BF16, Shape: []int{n}, Region: r}
}

// The backend cuts a long pass into command buffers within the budget, and the times it
// reports are the model's: the dispatches' estimates plus one commit per command buffer.
func TestModelBackendCutsLongPasses(t *testing.T) {
	g := shaders.GPUs[0]
	m := newTestModel(t, g)
	const S, heads, hd, seg = 2048, 4, 72, 256
	var segs []backend.Segment
	for s := 0; s < S; s += seg {
		segs = append(segs, backend.Segment{Start: s, End: s + seg})
	}
	o1 := shaders.Operand{Handle: 1}
	one := slowestGPU.Estimate(shaders.Attention(o1, o1, o1, o1, 3*heads*hd, segs[0], segs[0], S, heads, hd, 0.1).Cost).Time
	m.b.budget = one * 5 / 2 // a cut after every third segment
	qkv, o := m.buf(S*3*heads*hd), m.buf(S*heads*hd)
	m.b.Attention(o, qkv, qkv.At(heads*hd), qkv.At(2*heads*hd), 3*heads*hd, segs, heads, hd, 0.1)
	got, err := m.b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if m.log.Passes != 3 {
		t.Fatalf("%d command buffers for 8 segments of %v each, budget %v: want 3", m.log.Passes, one, m.b.budget)
	}
	var want time.Duration
	perPass := map[int]time.Duration{}
	var longest time.Duration
	for _, r := range m.log.Records {
		want += r.Estimate.Time
		perPass[r.Pass] += slowestGPU.Estimate(r.Cost).Time
		longest = max(longest, slowestGPU.Estimate(r.Cost).Time)
	}
	want += time.Duration(m.log.Passes) * shaders.CommitCost
	if got != want {
		t.Errorf("Commit reported %v, the model's dispatches and commits sum to %v", got, want)
	}
	for p, d := range perPass {
		if d > m.b.budget+longest {
			t.Errorf("command buffer %d holds %v of modelled work, budget %v", p, d, m.b.budget)
		}
	}
}

// The 8B tower's block at 5,120 patches, as engine/tower/graph.go encodes it (tile 512): the model
// predicts at least half of the FP32 peak on every GPU it knows.
func TestModelPredictsHalfOfPeakAt5120(t *testing.T) {
	const S, D, H, hd, I, tile = 5120, 1152, 16, 72, 4304, 512
	for _, g := range shaders.GPUs {
		m := newTestModel(t, g)
		h, ln, qkv, attn, tmp, tl := m.buf(S*D), m.buf(S*D), m.buf(S*3*D), m.buf(S*D), m.buf(S*D), m.buf(tile*I)
		cos, sin := m.buf(S*hd), m.buf(S*hd)
		w := func(n int) backend.Weight { return m.weight(n) }
		m.b.Commit()
		// attention half
		m.b.LayerNorm(ln, h, w(D), w(D), S, D, 1e-6)
		m.b.MatMul(qkv, ln, w(3*D*D), w(3*D), S, D, 3*D)
		m.b.Rope2D(qkv, 3*D, cos, sin, S, H, hd)
		m.b.Rope2D(qkv.At(D), 3*D, cos, sin, S, H, hd)
		m.b.Attention(attn, qkv, qkv.At(D), qkv.At(2*D), 3*D, []backend.Segment{{Start: 0, End: S}}, H, hd, 0.1)
		m.b.MatMulEpilogue(tmp, attn, w(D*D), w(D), S, D, D, backend.Epilogue{Residual: h})
		att, _ := m.b.Commit()
		// MLP half
		m.b.LayerNorm(ln, h, w(D), w(D), S, D, 1e-6)
		fc1w, fc1b, fc2w, fc2b := w(I*D), w(I), w(D*I), w(D)
		for r0 := 0; r0 < S; r0 += tile {
			m.b.MatMulEpilogue(tl, ln.At(r0*D), fc1w, fc1b, tile, D, I, backend.Epilogue{GELU: true})
			m.b.MatMulEpilogue(tmp.At(r0*D), tl, fc2w, fc2b, tile, I, D, backend.Epilogue{Residual: h.At(r0 * D)})
		}
		mlp, _ := m.b.Commit()
		flops := 2*S*D*3*D + 4.0*S*S*D + 2*S*D*D + 4*S*D*I
		frac := g.FractionOfPeak(flops, att+mlp)
		t.Logf("%s: block %v (attention %v, MLP %v), %.0f%% of FP32 peak", g.Name, att+mlp, att, mlp, 100*frac)
		if frac < 0.5 {
			t.Errorf("%s: the model predicts %.0f%% of FP32 peak per block at 5,120 patches, want >= 50%%", g.Name, 100*frac)
		}
	}
}
