package conformance

// cases.go: the table. Each case runs one op on a backend through the backend.Backend
// interface only and returns what it computed and the float64 reference.
//
// Invariant: the sizes are not multiples of the blockings of any backend (CPU micro-kernel
// 3x2 and 6x16, k-block 2048, row block 192, column panel 64, attention chunk 192,
// elementwise chunk 16384; Metal's 64x64 matmul tile, 4 queries per threadgroup, 256-thread
// elementwise groups) and the segments are uneven, length 1 included. Mutation that would
// silently break it: sizes that are multiples of every block, which never run the edge code
// (clipped rows, odd columns, k-tails, carried k-blocks).

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/dtype"
)

// Tolerances (RelDiff). MatMul and Attention accumulate in float32 over up to 4200 terms;
// the elementwise ops round once; Add is one rounding of an exact sum.
const (
	TolMatMul    = 1e-5
	TolAttention = 1e-5
	TolLayerNorm = 1e-6
	TolRope      = 1e-6
	TolGELU      = 1e-6
	TolAdd       = 1e-7
)

// Case is one op on one shape.
type Case struct {
	Name string
	Tol  float64
	run  func(s *Suite, be backend.Backend) (got []float32, want []float64)
}

// Run runs the case on be (weights in s) and returns what be computed and the reference.
// A backend failure panics (Check turns it into a Result).
func (c Case) Run(s *Suite, be backend.Backend) (got []float32, want []float64) {
	return c.run(s, be)
}

// Check runs the case and measures it; a panic or a failed Commit is the case's failure, and
// so is an output that holds NaN or Inf or an op that wrote outside its output (Defect).
func (c Case) Check(s *Suite, be backend.Backend) (res Result) {
	res = Result{Name: c.Name, Tol: c.Tol}
	defer func() {
		if p := recover(); p != nil {
			res.Err = fmt.Errorf("panic: %v", p)
		}
	}()
	s.startCase()
	got, want := c.run(s, be)
	if _, err := be.Commit(); err != nil {
		res.Err = err
		return res
	}
	res.RelErr = RelDiff(got, want)
	if res.Defect = s.defect(be, got); res.Defect != "" {
		res.RelErr = math.Inf(1)
	}
	return res
}

var weightDTypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}

// Cases is the table, in a fixed order.
func Cases() []Case {
	var cases []Case
	for _, d := range weightDTypes {
		for _, rows := range []int{1, 7, 33, 130, 200} {
			for _, io := range [][2]int{{17, 5}, {72, 33}, {100, 130}, {300, 65}} {
				cases = append(cases, MatMul(d, rows, io[0], io[1], true, 0))
			}
		}
		cases = append(cases, MatMul(d, 7, 72, 33, false, 0))
		cases = append(cases, MatMul(d, 4, 4200, 9, true, 0)) // three k-blocks, carried sums
		cases = append(cases, MatMul(d, 37, 45, 50, true, 2)) // a weight at a misaligned offset
		for _, rows := range []int{1, 7, 33} {
			for _, cols := range []int{17, 72, 100, 1152} {
				cases = append(cases, LayerNorm(d, rows, cols, 0), RMSNorm(d, rows, cols, 0))
			}
		}
	}
	for _, form := range []backend.GELUForm{backend.GELUTanh, backend.GELUErf, backend.GELUQuick, backend.GELUSiLU} {
		for _, n := range []int{1, 7, 1000, 40000} {
			cases = append(cases, GELU(form, n))
		}
	}
	for _, n := range []int{1, 7, 1000, 40000} {
		cases = append(cases, Add(n, false))
	}
	cases = append(cases, Add(777, true))
	for _, n := range []int{1, 1000, 40000} {
		cases = append(cases, Mul(n, false))
	}
	cases = append(cases, Mul(777, true))
	for _, mean := range []bool{false, true} {
		cases = append(cases, FillColumns(7, 64, 16, 32, mean), FillColumns(1000, 72, 0, 72, mean), FillColumns(5, 48, 40, 48, mean))
	}
	cases = append(cases, MatMulEpilogue(dtype.BF16, 13, 300, 70, true, backend.GELUTanh, false), MatMulEpilogue(dtype.BF16, 7, 100, 33, true, backend.GELUErf, false),
		MatMulEpilogue(dtype.BF16, 20, 1100, 45, false, backend.GELUTanh, true), MatMulEpilogue(dtype.BF16, 5, 72, 130, true, backend.GELUTanh, true),
		MatMulEpilogue(dtype.BF16, 11, 200, 60, true, backend.GELUQuick, true), MatMulEpilogue(dtype.BF16, 9, 150, 40, true, backend.GELUSiLU, false))
	// Grids of 16 x 16 output tiles of 64: past Metal's small-grid switch (240), so its 64-row
	// kernels run (qkv, proj and fc1 at real page sizes). k = 40 is one full k step of 32 and a
	// tail; the epilogue's own k is a tail only (the k loop is the plain case's).
	for _, d := range weightDTypes {
		cases = append(cases, MatMul(d, 1000, 40, 970, true, 0), MatMulEpilogue(d, 1000, 9, 970, true, backend.GELUErf, true))
	}
	for _, hd := range []int{6, 16, 64, 72} {
		for _, seq := range []int{1, 7, 33} {
			cases = append(cases, Rope(seq, 3, hd, false), Rope(seq, 3, hd, true))
		}
		cases = append(cases, Attention(3, hd, Cuts(0, 1, 8, 41, 44), 1))
		cases = append(cases, Attention(3, hd, Cuts(0, 200, 201, 290), 1))
	}
	cases = append(cases, Attention(2, 80, Cuts(0, 3, 40, 41), 1))
	// The other head dims Metal has a flash kernel for (key tiles of 32, and of 16 at 128).
	for _, hd := range []int{32, 96, 128} {
		cases = append(cases, Attention(2, hd, Cuts(0, 3, 70, 71), 1))
	}
	cases = append(cases, Attention(2, 72, Cuts(0, 3, 40, 41), 40)) // logits past 100
	// Segments longer than a key tile of the CPU's flash path (256), peaky enough that a row's
	// max often lies in a later tile than its first.
	cases = append(cases, Attention(2, 72, Cuts(0, 5, 700), 40))
	cases = append(cases, Attention(1, 64, Cuts(0, 600), 1))
	// Key ranges apart from the queries (a key mask's gathered keys: engine/tower/graph.go keysOf): k and v
	// in a buffer of their own, ranges that overlap each other, one longer than a flash tile.
	keyed := []backend.Segment{{Start: 0, End: 5, KeyStart: 3, KeyEnd: 9}, {Start: 5, End: 300, KeyStart: 0, KeyEnd: 280},
		{Start: 300, End: 301, KeyStart: 280, KeyEnd: 281}}
	for _, hd := range []int{16, 72} {
		cases = append(cases, AttentionKeys(3, hd, keyed, 1))
	}
	cases = append(cases, AttentionKeys(2, 72, keyed, 40))
	// The watchdog's paths (a backend that splits long ops into dispatches and cuts command
	// buffers, Splitter): every dispatch as small as it can be, every command buffer cut.
	cases = append(cases, Split(Attention(2, 72, Cuts(0, 3, 70, 71), 1)), Split(MatMul(dtype.BF16, 200, 72, 130, true, 0)),
		Split(MatMulEpilogue(dtype.F16, 300, 9, 970, true, backend.GELUTanh, true)))
	// The fallback kernels (a backend that degrades, Degrader): the scalar matmul for each weight
	// dtype, plain and with the epilogue, split too; the scalar attention at a flash head dim.
	for _, d := range weightDTypes {
		cases = append(cases, Fallback("matmul", MatMul(d, 130, 100, 70, true, 0)),
			Fallback("matmul", MatMulEpilogue(d, 70, 33, 130, true, backend.GELUErf, true)))
	}
	cases = append(cases, Split(Fallback("matmul", MatMulEpilogue(dtype.BF16, 200, 45, 65, true, backend.GELUTanh, true))),
		Fallback("flash", Attention(2, 72, Cuts(0, 3, 70, 71), 1)), Split(AttentionKeys(2, 72, keyed, 1)),
		Fallback("flash", AttentionKeys(2, 72, keyed, 1)))
	return cases
}

// AttentionKeys is Attention whose segments name their key rows apart (Segment.KeyStart,
// KeyEnd), in a k|v buffer other than q's.
func AttentionKeys(heads, hd int, segs []backend.Segment, scale float64) Case {
	end, keyEnd := 0, 0
	for _, sg := range segs {
		end, keyEnd = max(end, sg.End), max(keyEnd, sg.Keys().End)
	}
	name, tol := attentionCase("Attention/keys", heads, hd, segs, scale)
	return Case{name, tol, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(end*hd), uint64(keyEnd)))
		D := heads * hd
		sd := float32(math.Sqrt(scale))
		qkv, kv := RandVals(r, end*3*D, sd), RandVals(r, keyEnd*3*D, sd)
		x, y := s.Upload(be, qkv), s.Upload(be, kv)
		o := s.Alloc(be, end*D)
		sc := float32(1 / math.Sqrt(float64(hd)))
		be.Attention(o, x, y.At(D), y.At(2*D), 3*D, segs, heads, hd, sc)
		want := RefAttention(qkv, kv[D:], kv[2*D:], 3*D, segs, heads, hd, float64(sc))
		return Download(be, o, end*D), want
	}}
}

// Degrader is a backend with kernel families it can run without, on their fallback kernels
// (Metal: the scalar matmul where the simdgroup-matrix one did not compile): WithoutFamily
// makes it run as if the family had not compiled, until restore is called.
type Degrader interface {
	WithoutFamily(family string) (restore func(), err error)
}

// Fallback is c run without the kernel family (the fallback kernels instead) on a backend that
// degrades (Degrader): a GPU checks the kernels it would fall back to before it needs them. On
// any other backend it is c. The name keeps c's first (the op's) and adds "/without-family".
func Fallback(family string, c Case) Case {
	return Case{c.Name + "/without-" + family, c.Tol, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		if dg, ok := be.(Degrader); ok {
			restore, err := dg.WithoutFamily(family)
			if err != nil {
				panic(err) // Check makes it this case's failure
			}
			defer restore()
		}
		return c.run(s, be)
	}}
}

// Splitter is a backend that splits long ops into dispatches and command buffers (Metal's
// watchdog): SplitAll makes every dispatch as small as it can be and commits the command
// buffer after each, until restore is called.
type Splitter interface {
	SplitAll() (restore func())
}

// Split is c run with every dispatch as small as it can be and every command buffer cut,
// on a backend that splits (Splitter); on any other backend it is c.
func Split(c Case) Case {
	return Case{"Split/" + c.Name, c.Tol, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		if sp, ok := be.(Splitter); ok {
			defer sp.SplitAll()()
		}
		return c.run(s, be)
	}}
}

// Cuts returns the consecutive segments [b0,b1), [b1,b2), ... (cu_seqlens style).
func Cuts(bounds ...int) []backend.Segment {
	var s []backend.Segment
	for i := 1; i < len(bounds); i++ {
		s = append(s, backend.Segment{Start: bounds[i-1], End: bounds[i]})
	}
	return s
}

// RandVals are n normal values of standard deviation scale.
func RandVals(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64()) * scale
	}
	return v
}

// Upload allocates a buffer of be holding vals (an allocation failure panics).
func Upload(be backend.Backend, vals []float32) backend.View {
	v := Alloc(be, len(vals))
	be.Upload(v, vals)
	return v
}

// Alloc allocates n zeroed floats of be (a failure panics).
func Alloc(be backend.Backend, n int) backend.View {
	buf, err := be.Alloc(n)
	if err != nil {
		panic(fmt.Sprintf("conformance: Alloc(%d): %v", n, err))
	}
	return backend.View{Buf: buf}
}

// Download reads n floats of v.
func Download(be backend.Backend, v backend.View, n int) []float32 {
	out := make([]float32, n)
	be.Download(out, v)
	return out
}

// MatMul: y = x W^T + b, W of dtype d at byte offset skew, x read from element 3 of its
// buffer and y written from element 2 of its own (offset views are honoured, nothing
// outside y is written).
func MatMul(d dtype.DType, rows, in, out int, withBias bool, skew int) Case {
	name := fmt.Sprintf("MatMul/%s/rows%d/in%d/out%d/bias%v/skew%d", d, rows, in, out, withBias, skew)
	return Case{name, TolMatMul, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows*in), uint64(out)))
		w, wf := s.Weight("w", RandVals(r, out*in, 0.1), d, skew, out, in)
		var bias backend.Weight
		var bf []float32
		if withBias {
			bias, bf = s.Weight("b", RandVals(r, out, 0.5), d, skew, out)
		}
		xv := RandVals(r, rows*in, 1)
		x := s.Upload(be, append(make([]float32, 3), xv...))
		y := s.Alloc(be, rows*out+3)
		be.MatMul(y.At(2), x.At(3), w, bias, rows, in, out)
		got := Download(be, y, rows*out+3)
		if got[0] != 0 || got[1] != 0 || got[rows*out+2] != 0 {
			return s.outOfBounds()
		}
		return got[2 : rows*out+2], RefMatMul(xv, wf, bf, rows, in, out)
	}}
}

// LayerNorm over rows with a mean far from zero (a one-pass variance would lose digits).
func LayerNorm(d dtype.DType, rows, cols, skew int) Case {
	name := fmt.Sprintf("LayerNorm/%s/rows%d/cols%d/skew%d", d, rows, cols, skew)
	return Case{name, TolLayerNorm, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		w, wf := s.Weight("w", RandVals(r, cols, 1), d, skew, cols)
		bias, bf := s.Weight("b", RandVals(r, cols, 1), d, skew, cols)
		xv := RandVals(r, rows*cols, 2)
		for i := range xv {
			xv[i] += 5
		}
		x := s.Upload(be, xv)
		y := s.Alloc(be, rows*cols)
		be.LayerNorm(y, x, w, bias, rows, cols, 1e-6)
		return Download(be, y, rows*cols), RefLayerNorm(xv, wf, bf, rows, cols, 1e-6)
	}}
}

// RMSNorm over rows with a mean far from zero (a norm that took the mean off would be far off).
func RMSNorm(d dtype.DType, rows, cols, skew int) Case {
	name := fmt.Sprintf("RMSNorm/%s/rows%d/cols%d/skew%d", d, rows, cols, skew)
	return Case{name, TolLayerNorm, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows), uint64(cols+1)))
		w, wf := s.Weight("w", RandVals(r, cols, 1), d, skew, cols)
		xv := RandVals(r, rows*cols, 2)
		for i := range xv {
			xv[i] += 1
		}
		x := s.Upload(be, xv)
		y := s.Alloc(be, rows*cols)
		be.RMSNorm(y, x, w, rows, cols, 1e-6)
		return Download(be, y, rows*cols), RefRMSNorm(xv, wf, rows, cols, 1e-6)
	}}
}

// Mul: dst *= src, or dst *= dst in place.
func Mul(n int, inPlace bool) Case {
	return binaryCase("Mul", 9, n, inPlace, backend.Backend.Mul, RefMul)
}

// FillColumns: columns [c0, c1) of a [rows, stride] buffer set to 0 or to their mean over the
// rows (head ablation), the other columns and the buffer's edges untouched. The mean is a sum
// over the rows, float32 on a GPU: a matmul's tolerance.
func FillColumns(rows, stride, c0, c1 int, mean bool) Case {
	name := fmt.Sprintf("FillColumns/rows%d/stride%d/cols%d-%d/mean%v", rows, stride, c0, c1, mean)
	return Case{name, TolMatMul, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows*stride), uint64(c0)))
		xv := RandVals(r, rows*stride, 1)
		for i := range xv {
			xv[i] += 3 // a mean far from zero
		}
		x := s.Upload(be, append(append([]float32{7}, xv...), 7))
		be.FillColumns(x.At(1), rows, stride, c0, c1, mean)
		got := Download(be, x, rows*stride+2)
		if got[0] != 7 || got[rows*stride+1] != 7 {
			return s.outOfBounds()
		}
		return got[1 : rows*stride+1], RefFillColumns(xv, rows, stride, c0, c1, mean)
	}}
}

// GELU of the named form on values of standard deviation 3.
func GELU(form backend.GELUForm, n int) Case {
	return Case{fmt.Sprintf("GELU/%s/n%d", form, n), TolGELU, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		xv := RandVals(rand.New(rand.NewPCG(uint64(n), 7)), n, 3)
		x := s.Upload(be, xv)
		be.GELU(x, n, form)
		return Download(be, x, n), RefGELU(xv, form)
	}}
}

// Add: dst += src, or dst += dst in place.
func Add(n int, inPlace bool) Case {
	return binaryCase("Add", 8, n, inPlace, backend.Backend.Add, RefAdd)
}

// binaryCase is an element-wise op dst op= src over n random values (seed picks them), or
// dst op= dst in place, against its float64 reference.
func binaryCase(name string, seed uint64, n int, inPlace bool, op func(backend.Backend, backend.View, backend.View, int), ref func(dst, src []float32) []float64) Case {
	return Case{fmt.Sprintf("%s/n%d/inplace%v", name, n, inPlace), TolAdd, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(n), seed))
		a, b := RandVals(r, n, 1), RandVals(r, n, 1)
		x, y := s.Upload(be, a), s.Upload(be, b)
		if inPlace {
			y, b = x, a
		}
		op(be, x, y, n)
		return Download(be, x, n), ref(a, b)
	}}
}

// Rope rotates the q (or k) part of a [seq, 3*heads*hd] qkv buffer, as the block does, with
// random cos/sin (not angle-structured, so any wrong pairing shows); the rest stays.
func Rope(seq, heads, hd int, kPart bool) Case {
	name := fmt.Sprintf("Rope2D/seq%d/heads%d/hd%d/k%v", seq, heads, hd, kPart)
	return Case{name, TolRope, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(seq*hd), uint64(heads)))
		D := heads * hd
		qkv := RandVals(r, seq*3*D, 1)
		cos, sin := RandVals(r, seq*hd, 1), RandVals(r, seq*hd, 1)
		x := s.Upload(be, qkv)
		off := 0
		if kPart {
			off = D
		}
		be.Rope2D(x.At(off), 3*D, s.Upload(be, cos), s.Upload(be, sin), seq, heads, hd)
		want := RefRope2D(qkv[off:], 3*D, cos, sin, seq, heads, hd)
		got := Download(be, x, seq*3*D)
		for i := range off {
			if got[i] != qkv[i] {
				return s.outOfBounds()
			}
		}
		return got[off:], want
	}}
}

// MatMulEpilogue: y = x W^T + b, then the GELU of form (gelu) and the residual add (res):
// y and the residual are both checked, against the float64 product put through the same steps.
func MatMulEpilogue(d dtype.DType, rows, in, out int, gelu bool, form backend.GELUForm, res bool) Case {
	name := fmt.Sprintf("MatMulEpilogue/%s/rows%d/in%d/out%d/gelu%v-%s/residual%v", d, rows, in, out, gelu, form, res)
	return Case{name, TolMatMul, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(rows*in+out), 11))
		w, wf := s.Weight("w", RandVals(r, out*in, 0.1), d, 0, out, in)
		bias, bf := s.Weight("b", RandVals(r, out, 0.5), d, 0, out)
		xv, rv := RandVals(r, rows*in, 1), RandVals(r, rows*out, 1)
		x, y := s.Upload(be, xv), s.Alloc(be, rows*out)
		ep := backend.Epilogue{GELU: gelu, Form: form}
		if res {
			ep.Residual = s.Upload(be, rv)
		}
		be.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
		got := Download(be, y, rows*out)
		want := RefMatMul(xv, wf, bf, rows, in, out)
		if gelu {
			for i, v := range want {
				want[i] = RefGELUScalar(v, form)
			}
		}
		if !res {
			return got, want
		}
		gotRes := Download(be, ep.Residual, rows*out)
		wantRes := make([]float64, rows*out)
		for i := range wantRes {
			wantRes[i] = float64(rv[i]) + want[i]
		}
		return append(got, gotRes...), append(want, wantRes...)
	}}
}

// attentionCase is an attention case's name and tolerance: a float32 score's rounding grows
// with its magnitude, and the probabilities with it.
func attentionCase(kind string, heads, hd int, segs []backend.Segment, scale float64) (string, float64) {
	name := fmt.Sprintf("%s/heads%d/hd%d/segs%v", kind, heads, hd, segs)
	if scale != 1 {
		name += fmt.Sprintf("/logit-sd%g", scale)
	}
	return name, TolAttention * max(1, scale/10)
}

// Attention on q, k, v inside one [seq, 3D] qkv buffer (stride 3D); q and k have variance
// scale, so the logits have standard deviation scale (40 puts the largest past 100).
func Attention(heads, hd int, segs []backend.Segment, scale float64) Case {
	end := segs[len(segs)-1].End
	name, tol := attentionCase("Attention", heads, hd, segs, scale)
	return Case{name, tol, func(s *Suite, be backend.Backend) ([]float32, []float64) {
		r := rand.New(rand.NewPCG(uint64(end*hd), uint64(heads)))
		D := heads * hd
		qkv := RandVals(r, end*3*D, float32(math.Sqrt(scale)))
		x := s.Upload(be, qkv)
		o := s.Alloc(be, end*D)
		sc := float32(1 / math.Sqrt(float64(hd)))
		be.Attention(o, x, x.At(D), x.At(2*D), 3*D, segs, heads, hd, sc)
		want := RefAttention(qkv, qkv[D:], qkv[2*D:], 3*D, segs, heads, hd, float64(sc))
		return Download(be, o, end*D), want
	}}
}
