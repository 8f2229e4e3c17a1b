//go:build linux

package shaders_test

// harness_test.go: every kernel of the library, compiled as C++ and run through the same
// dispatches the Metal backend encodes, against the float64 references of engine/cpu, on
// random inputs whose sizes are not multiples of the threadgroup sizes; then each
// deliberately broken variant (MUTANT(name) in the kernels) must fail the same check.
//
// Invariant: a check passes only when every output element is within its stated tolerance
// of the reference (NaN or Inf anywhere fails). Mutation that would silently break it:
// comparing the kernel's output with itself, or with a reference computed from the kernel's
// own output buffer — the mutant tests below would then pass too, and they must not.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/conformance"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/shaders"
	"github.com/turbospark/inspector/shaders/harness"
)

// Tolerances: max|got-want| / max|want| against float64 references, per kernel.
var tolerance = map[string]float64{
	"layer_norm":    1e-5,
	"rms_norm":      1e-5,
	"mul":           0,    // float32 product: exact rounding of the float64 one
	"fill":          1e-5, // the mean: a float32 sum over the rows
	"matmul":        1e-5,
	"matmul_scalar": 1e-5,
	"rope2d":        1e-6,
	"attention":     1e-5,
	"gelu":          1e-6,
	"add":           0, // float32 addition is exact rounding of the float64 sum
}

// check runs one kernel family's cases with a driver (and mutant) and returns the largest
// relative error seen.
type check func(d *harness.Driver, mutant string) (float64, error)

var checks = map[string]check{
	"layer_norm":    checkLayerNorm,
	"rms_norm":      checkRMSNorm,
	"mul":           checkMul,
	"fill":          checkFill,
	"matmul":        checkMatMul,
	"matmul_scalar": checkMatMulScalar,
	"rope2d":        checkRope,
	"attention":     checkAttention,
	"gelu":          checkGELU,
	"add":           checkAdd,
}

// mutants: each deliberately broken variant and the check that must catch it.
var mutants = []struct{ name, check string }{
	{"UNBIASED_VARIANCE", "layer_norm"},
	{"DROP_K_TAIL", "matmul"},
	{"EPILOGUE_Y_BEFORE_GELU", "matmul"},
	{"DROP_K_TAIL", "matmul_scalar"},
	{"EPILOGUE_Y_BEFORE_GELU", "matmul_scalar"}, // the epilogue both matmul families share
	{"MMS_NO_STAGE_BARRIER", "matmul_scalar"},
	{"ROPE_INTERLEAVED", "rope2d"},
	{"NO_SEGMENT_BOUND", "attention"},
	{"NO_MAX_SUBTRACTION", "attention"},
	{"FLASH_NO_RESCALE", "attention"},
	{"FLASH_RESCALE_IF_ALL", "attention"},
	{"GELU_FORMS_SWAPPED", "gelu"},
	{"QUICK_AS_TANH", "gelu"},
	{"QUICK_AS_TANH", "matmul"}, // the epilogue's quick form
	{"SILU_AS_QUICK", "gelu"},
	{"SILU_AS_QUICK", "matmul"}, // the epilogue's SiLU form
	{"RMS_CENTERED", "rms_norm"},
	{"MUL_ADDS", "mul"},
	{"MEAN_SKIPS_LAST_ROW", "fill"},
}

func TestKernelsMatchReference(t *testing.T) {
	d := harness.Shared(t, false)
	names := make([]string, 0, len(checks))
	for name := range checks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got, err := checks[name](d, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: max relative error %.3g (tolerance %.0g)", name, got, tolerance[name])
			if !(got <= tolerance[name]) {
				t.Errorf("%s: max relative error %.3g, tolerance %.0g", name, got, tolerance[name])
			}
		})
	}
}

func TestBrokenKernelsAreCaught(t *testing.T) {
	d := harness.Shared(t, true)
	for _, m := range mutants {
		t.Run(m.name+"/"+m.check, func(t *testing.T) {
			got, err := checks[m.check](d, m.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("mutant %s: %s max relative error %.3g (tolerance %.0g)", m.name, m.check, got, tolerance[m.check])
			if got <= tolerance[m.check] {
				t.Errorf("mutant %s passed the %s check (error %.3g): the harness would not catch it", m.name, m.check, got)
			}
		})
	}
}

// The mutant build without a mutant selected is the production kernel: it must pass.
func TestMutantBuildWithoutMutantPasses(t *testing.T) {
	d := harness.Shared(t, true)
	got, err := checkRope(d, "")
	if err != nil || got > tolerance["rope2d"] {
		t.Fatalf("mutant build, no mutant: rope error %.3g, %v", got, err)
	}
}

func TestEveryMutantIsExercised(t *testing.T) {
	inKernels := map[string]bool{}
	for _, m := range regexp.MustCompile(`MUTANT\((\w+)\)`).FindAllStringSubmatch(shaders.Library(), -1) {
		if m[1] != "name" {
			inKernels[m[1]] = true
		}
	}
	tested := map[string]bool{}
	for _, m := range mutants {
		tested[m.name] = true
	}
	for name := range inKernels {
		if !tested[name] {
			t.Errorf("MUTANT(%s) appears in the kernels but no test runs it", name)
		}
	}
	for name := range tested {
		if !inKernels[name] {
			t.Errorf("mutant %s is tested but appears in no kernel", name)
		}
	}
}

func TestEveryKernelIsChecked(t *testing.T) {
	d := harness.Shared(t, false)
	list, err := d.Kernels()
	if err != nil {
		t.Fatal(err)
	}
	var inDriver []string
	for _, k := range list {
		if !strings.HasPrefix(k, "selftest_") {
			inDriver = append(inDriver, k)
		}
	}
	sort.Strings(inDriver)
	if want := shaders.Kernels(); strings.Join(inDriver, " ") != strings.Join(want, " ") {
		t.Fatalf("the driver runs %v, the library has %v", inDriver, want)
	}
	family := map[string]string{"matmul_f32": "matmul", "matmul_bf16": "matmul", "matmul_f16": "matmul",
		"matmul_f32_m32": "matmul", "matmul_bf16_m32": "matmul", "matmul_f16_m32": "matmul",
		"matmul_scalar_f32": "matmul_scalar", "matmul_scalar_bf16": "matmul_scalar", "matmul_scalar_f16": "matmul_scalar",
		"gelu_tanh": "gelu", "gelu_erf": "gelu", "gelu_quick": "gelu", "gelu_silu": "gelu", "add_into": "add", "mul_into": "mul", "fill_columns": "fill"}
	for _, c := range attentionCases() {
		family[shaders.AttentionKernel(c.hd)] = "attention" // run by the attention check's cases
	}
	for _, k := range shaders.Kernels() {
		f := family[k]
		if f == "" {
			f = k
		}
		if checks[f] == nil {
			t.Errorf("kernel %s has no check", k)
		}
	}
}

// ---- jobs ----

// job collects buffers and dispatches for one driver run.
type job struct{ harness.Job }

func (j *job) add(data []byte, readOnly bool) int {
	j.Buffers = append(j.Buffers, harness.Buffer{Data: data, ReadOnly: readOnly})
	return len(j.Buffers) - 1
}

// floats adds a float32 buffer holding pad sentinels, then xs, then pad sentinels; the
// operand points at xs.
func (j *job) floats(xs []float32, pad int) shaders.Operand {
	all := make([]float32, 0, len(xs)+2*pad)
	for range pad {
		all = append(all, sentinel)
	}
	all = append(all, xs...)
	for range pad {
		all = append(all, sentinel)
	}
	return shaders.Operand{Handle: j.add(f32bytes(all), false), Offset: 4 * pad}
}

// result reads n floats at an operand after the run, and checks the sentinels around them.
func (j *job) result(o shaders.Operand, n int) ([]float32, error) {
	all := bytesf32(j.Buffers[o.Handle.(int)].Data)
	off := o.Offset / 4
	for i, v := range all {
		if (i < off || i >= off+n) && math.Float32bits(v) != math.Float32bits(sentinel) {
			return nil, fmt.Errorf("element %d outside the output [%d,%d) was overwritten", i, off, off+n)
		}
	}
	return all[off : off+n], nil
}

const sentinel = float32(-12345.5)

// weight places values, narrowed to dtype, at byte offset off of a read-only buffer, and
// returns the operand and the backend.Weight over the same bytes (for the references).
func (j *job) weight(vals []float32, dt dtype.DType, off int) (shaders.Operand, backend.Weight) {
	raw := make([]byte, off, off+len(vals)*dt.Size()+8)
	raw = dtype.EncodeF32(raw, vals, dt)
	raw = append(raw, make([]byte, 8)...)
	w := backend.Weight{Name: "w", DType: dt, Shape: []int{len(vals)}, Region: &backend.Region{Bytes: raw}, Offset: off}
	return shaders.Operand{Handle: j.add(raw, true), Offset: off}, w
}

func (j *job) run(d *harness.Driver, mutant string, ds ...shaders.Dispatch) error {
	j.Mutant = mutant
	j.Dispatches = append(j.Dispatches, ds...)
	return d.Run(&j.Job)
}

func f32bytes(xs []float32) []byte {
	out := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		out = append(out, byte(math.Float32bits(x)), byte(math.Float32bits(x)>>8), byte(math.Float32bits(x)>>16), byte(math.Float32bits(x)>>24))
	}
	return out
}

func bytesf32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

func randn(r *rand.Rand, n int, scale, mean float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64()*scale + mean)
	}
	return out
}

func dtypeCode(dt dtype.DType) shaders.DType {
	c, err := shaders.DTypeOf(dt)
	if err != nil {
		panic(err)
	}
	return c
}

// ---- checks ----

func checkLayerNorm(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	type dts struct{ w, b dtype.DType }
	for _, c := range []struct {
		rows, cols int
		dt         dts
	}{
		{3, 16, dts{dtype.F32, dtype.F32}},
		{5, 50, dts{dtype.BF16, dtype.BF16}},
		{2, 97, dts{dtype.F16, dtype.F16}},
		{4, 300, dts{dtype.BF16, dtype.F32}},
	} {
		var j job
		x := randn(r, c.rows*c.cols, 2, 0.7) // a mean far from 0: the two-pass variance matters
		wv, bv := randn(r, c.cols, 0.5, 1), randn(r, c.cols, 0.3, 0)
		xo, out := j.floats(x, 3), j.floats(make([]float32, c.rows*c.cols), 5)
		wo, w := j.weight(wv, c.dt.w, 2*c.dt.w.Size())
		bo, b := j.weight(bv, c.dt.b, 6)
		if c.dt.b == dtype.F32 {
			bo, b = j.weight(bv, c.dt.b, 8)
		}
		disp := shaders.LayerNorm(out, xo, wo, bo, dtypeCode(c.dt.w), dtypeCode(c.dt.b), c.rows, c.cols, 1e-6)
		if err := j.run(d, mutant, disp); err != nil {
			return 0, err
		}
		got, err := j.result(out, c.rows*c.cols)
		if err != nil {
			return 0, err
		}
		want := conformance.RefLayerNorm(x, conformance.RefWiden(w), conformance.RefWiden(b), c.rows, c.cols, 1e-6)
		worst = math.Max(worst, conformance.RelDiff(got, want))
	}
	return worst, nil
}

// checkMatMul runs the simdgroup-matrix kernels at both row tiles (MatMul picks one by the
// grid's size).
func checkMatMul(d *harness.Driver, mutant string) (float64, error) {
	return checkMatMulOn(d, mutant, []int{64, 32}, func(bm int, dt shaders.DType, yo, xo, wo, bo shaders.Operand, rows, in, out int, ep shaders.Epilogue) shaders.Dispatch {
		return shaders.MatMulTiled(bm, yo, xo, wo, bo, dt, dt, rows, in, out, ep)
	})
}

// checkMatMulScalar runs their fallback, the scalar kernels, on the same cases.
func checkMatMulScalar(d *harness.Driver, mutant string) (float64, error) {
	return checkMatMulOn(d, mutant, []int{64}, func(_ int, dt shaders.DType, yo, xo, wo, bo shaders.Operand, rows, in, out int, ep shaders.Epilogue) shaders.Dispatch {
		return shaders.MatMulOn(shaders.MatMulScalarKernel(dt), yo, xo, wo, bo, dt, dt, rows, in, out, ep)
	})
}

type matMulPlanner func(bm int, dt shaders.DType, yo, xo, wo, bo shaders.Operand, rows, in, out int, ep shaders.Epilogue) shaders.Dispatch

func checkMatMulOn(d *harness.Driver, mutant string, tiles []int, plan matMulPlanner) (float64, error) {
	r := rand.New(rand.NewPCG(3, 4))
	worst := 0.0
	// Shapes off the 64x64 tile and the 32- and 16-deep k steps, one of several tiles each way.
	shapes := [][3]int{{37, 45, 50}, {70, 16, 130}, {1, 1, 1}, {65, 33, 64}, {130, 100, 70}}
	// The epilogue per case: none, GELU (tanh, erf, quick), residual, both.
	epilogues := []struct {
		gelu bool
		form backend.GELUForm
		res  bool
	}{{false, 0, false}, {true, backend.GELUTanh, false}, {true, backend.GELUErf, true}, {false, 0, true}, {true, backend.GELUQuick, true}, {true, backend.GELUSiLU, false}}
	for _, bm := range tiles {
		for di, dt := range []dtype.DType{dtype.F32, dtype.BF16, dtype.F16} {
			for si, s := range shapes {
				rows, in, out := s[0], s[1], s[2]
				withBias := si%2 == 0
				e := epilogues[(di+si+bm/32)%len(epilogues)]
				var j job
				x := randn(r, rows*in, 1, 0)
				xo, yo := j.floats(x, 3), j.floats(make([]float32, rows*out), 5)
				wo, w := j.weight(randn(r, out*in, 0.2, 0), dt, 4*dt.Size())
				var bo shaders.Operand
				var biasVals []float32
				if withBias {
					var b backend.Weight
					bo, b = j.weight(randn(r, out, 0.5, 0), dt, 2*dt.Size())
					biasVals = conformance.RefWiden(b)
				}
				ep := shaders.Epilogue{GELU: e.gelu, Form: e.form}
				var resVals []float32
				if e.res {
					resVals = randn(r, rows*out, 1, 0)
					ep.Residual = j.floats(resVals, 2)
				}
				disp := plan(bm, dtypeCode(dt), yo, xo, wo, bo, rows, in, out, ep)
				if err := j.run(d, mutant, disp); err != nil {
					return 0, err
				}
				got, err := j.result(yo, rows*out)
				if err != nil {
					return 0, fmt.Errorf("%s %v: %v", dt, s, err)
				}
				want := conformance.RefMatMul(x, conformance.RefWiden(w), biasVals, rows, in, out)
				if e.gelu {
					for i, v := range want {
						want[i] = conformance.RefGELUScalar(v, e.form)
					}
				}
				worst = math.Max(worst, conformance.RelDiff(got, want))
				if e.res {
					gotRes, err := j.result(ep.Residual, rows*out)
					if err != nil {
						return 0, fmt.Errorf("%s %v residual: %v", dt, s, err)
					}
					for i := range want {
						want[i] += float64(resVals[i])
					}
					worst = math.Max(worst, conformance.RelDiff(gotRes, want))
				}
			}
		}
	}
	return worst, nil
}

// ropeTables makes [seq, hd] cos/sin tables of angles that differ across i, as the axial
// rope's do (and unlike a table where cos[i] == cos[i+hd/2], so the pairing shows).
func ropeTables(r *rand.Rand, seq, hd int) (cos, sin []float32) {
	cos, sin = make([]float32, seq*hd), make([]float32, seq*hd)
	for i := range cos {
		a := r.Float64() * 2 * math.Pi
		cos[i], sin[i] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	return cos, sin
}

func checkRope(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(5, 6))
	worst := 0.0
	for _, hd := range []int{16, 64, 72} {
		const seq, heads = 7, 3
		D := heads * hd
		stride := 3 * D // a qkv buffer: rope on the q and k thirds, v untouched
		qkv := randn(r, seq*stride, 1, 0)
		cos, sin := ropeTables(r, seq, hd)
		var j job
		xo, co, so := j.floats(qkv, 2), j.floats(cos, 1), j.floats(sin, 1)
		ko := shaders.Operand{Handle: xo.Handle, Offset: xo.Offset + 4*D}
		err := j.run(d, mutant, shaders.Rope2D(xo, co, so, stride, seq, heads, hd), shaders.Rope2D(ko, co, so, stride, seq, heads, hd))
		if err != nil {
			return 0, err
		}
		got, err := j.result(xo, len(qkv))
		if err != nil {
			return 0, err
		}
		want := conformance.RefRope2D(qkv, stride, cos, sin, seq, heads, hd) // q third
		kWant := conformance.RefRope2D(toF32(want[D:]), stride, cos, sin, seq, heads, hd)
		copy(want[D:], kWant) // k third; v third copied unchanged
		worst = math.Max(worst, conformance.RelDiff(got, want))
	}
	return worst, nil
}

func toF32(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

// attentionCase is a qkv buffer [seq, 3D] with segments; scale multiplies q and k so that
// large logits (past exp's range) are covered.
type attentionCase struct {
	hd, heads int
	segs      []backend.Segment
	qkScale   float64
	split     int // queries per dispatch (0: a segment's queries in one)
}

func attentionCases() []attentionCase {
	segs := []backend.Segment{{Start: 0, End: 5}, {Start: 5, End: 75}, {Start: 75, End: 76}}
	keyed := []backend.Segment{{Start: 0, End: 5, KeyStart: 3, KeyEnd: 9}, {Start: 5, End: 75, KeyStart: 0, KeyEnd: 70},
		{Start: 75, End: 76, KeyStart: 70, KeyEnd: 71}}
	return []attentionCase{
		// attention_hd16/64/72/80/128 (key tiles of 32, and of 16 at 128), and `attention` at 40.
		{16, 2, segs, 1, 0}, {64, 2, segs, 1, 0}, {72, 2, segs, 1, 0}, {80, 1, segs, 1, 0}, {128, 1, segs, 1, 0},
		{32, 1, segs, 1, 0}, {96, 1, segs, 1, 0},
		{40, 2, segs, 1, 0},
		{16, 2, segs, 10, 0}, // logits past 100: exp without the maximum overflows (float32 exp ends near 88.7)
		{40, 2, segs, 10, 0},
		// A segment's queries split over dispatches, at the tile and off it.
		{72, 2, segs, 1, 32}, {16, 1, segs, 1, 13}, {40, 1, segs, 1, 6},
		// Key ranges apart from the queries, in a k|v buffer of their own (a key mask's
		// gathered keys): ranges that overlap, one longer than a key tile, split or not.
		{72, 2, keyed, 1, 0}, {16, 1, keyed, 1, 13}, {40, 2, keyed, 1, 0}, {128, 1, keyed, 10, 0},
	}
}

func (c attentionCase) qkv(r *rand.Rand) []float32 {
	seq := c.segs[len(c.segs)-1].End
	D := c.heads * c.hd
	x := randn(r, seq*3*D, 1, 0)
	for s := 0; s < seq; s++ {
		for i := 0; i < 2*D; i++ {
			x[s*3*D+i] *= float32(c.qkScale)
		}
	}
	return x
}

func checkAttention(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for _, c := range attentionCases() {
		seq, D := c.segs[len(c.segs)-1].End, c.heads*c.hd
		qkv, kv, keyEnd := c.qkv(r), []float32(nil), seq
		var j job
		qo, oo := j.floats(qkv, 1), j.floats(make([]float32, seq*D), 4)
		kvo := qo
		if c.segs[0].KeyEnd > 0 { // keys apart: a buffer of their own
			keyEnd = 0
			for _, sg := range c.segs {
				keyEnd = max(keyEnd, sg.KeyEnd)
			}
			kv = attentionCase{c.hd, c.heads, []backend.Segment{{End: keyEnd}}, c.qkScale, 0}.qkv(r)
			kvo = j.floats(kv, 2)
		} else {
			kv = qkv
		}
		ko := shaders.Operand{Handle: kvo.Handle, Offset: kvo.Offset + 4*D}
		vo := shaders.Operand{Handle: kvo.Handle, Offset: kvo.Offset + 8*D}
		scale := float32(1 / math.Sqrt(float64(c.hd)))
		var ds []shaders.Dispatch
		for _, sg := range c.segs {
			step := sg.End - sg.Start
			if c.split > 0 {
				step = c.split
			}
			for q0 := sg.Start; q0 < sg.End; q0 += step {
				qs := backend.Segment{Start: q0, End: min(q0+step, sg.End)}
				ds = append(ds, shaders.Attention(oo, qo, ko, vo, 3*D, sg.Keys(), qs, keyEnd, c.heads, c.hd, scale))
			}
		}
		if err := j.run(d, mutant, ds...); err != nil {
			return 0, err
		}
		got, err := j.result(oo, seq*D)
		if err != nil {
			return 0, err
		}
		want := conformance.RefAttention(qkv, kv[D:], kv[2*D:], 3*D, c.segs, c.heads, c.hd, float64(scale))
		worst = math.Max(worst, conformance.RelDiff(got, want))
	}
	return worst, nil
}

func checkGELU(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(11, 12))
	worst := 0.0
	x := make([]float32, 1000)
	for i := range x {
		x[i] = float32(r.Float64()*12 - 6)
	}
	copy(x, []float32{0, 1e-3, -1e-3, 20, -20, 3, -3})
	for _, form := range []backend.GELUForm{backend.GELUTanh, backend.GELUErf, backend.GELUQuick, backend.GELUSiLU} {
		var j job
		xo := j.floats(x, 3)
		if err := j.run(d, mutant, shaders.GELU(xo, len(x), form)); err != nil {
			return 0, err
		}
		got, err := j.result(xo, len(x))
		if err != nil {
			return 0, err
		}
		worst = math.Max(worst, conformance.RelDiff(got, conformance.RefGELU(x, form)))
	}
	return worst, nil
}

// checkRMSNorm: rows with a mean far from zero (a norm that centred them would be far off),
// weights of every dtype.
func checkRMSNorm(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(21, 22))
	worst := 0.0
	for _, c := range []struct {
		rows, cols int
		dt         dtype.DType
	}{{3, 16, dtype.F32}, {5, 50, dtype.BF16}, {2, 97, dtype.F16}, {4, 300, dtype.BF16}} {
		var j job
		x := randn(r, c.rows*c.cols, 1, 0.8)
		xo, out := j.floats(x, 3), j.floats(make([]float32, c.rows*c.cols), 5)
		wo, w := j.weight(randn(r, c.cols, 0.5, 1), c.dt, 2*c.dt.Size())
		if err := j.run(d, mutant, shaders.RMSNorm(out, xo, wo, dtypeCode(c.dt), c.rows, c.cols, 1e-6)); err != nil {
			return 0, err
		}
		got, err := j.result(out, c.rows*c.cols)
		if err != nil {
			return 0, err
		}
		want := conformance.RefRMSNorm(x, conformance.RefWiden(w), c.rows, c.cols, 1e-6)
		worst = math.Max(worst, conformance.RelDiff(got, want))
	}
	return worst, nil
}

// checkFill: columns set to 0 and to their mean over the rows, in a wider buffer whose other
// columns must stay.
func checkFill(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(25, 26))
	worst := 0.0
	for _, c := range []struct {
		rows, stride, c0, c1 int
		mean                 bool
	}{{7, 64, 16, 32, true}, {300, 72, 0, 72, true}, {5, 48, 40, 48, false}, {33, 80, 8, 16, true}} {
		x := randn(r, c.rows*c.stride, 1, 2)
		var j job
		xo := j.floats(x, 1)
		if err := j.run(d, mutant, shaders.FillColumns(xo, c.rows, c.stride, c.c0, c.c1, c.mean)); err != nil {
			return 0, err
		}
		got, err := j.result(xo, c.rows*c.stride)
		if err != nil {
			return 0, err
		}
		worst = math.Max(worst, conformance.RelDiff(got, conformance.RefFillColumns(x, c.rows, c.stride, c.c0, c.c1, c.mean)))
	}
	return worst, nil
}

// checkMul: dst *= src, and in place (x *= x), bit for bit the float32 product.
func checkMul(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(23, 24))
	const n = 777
	dst, src := randn(r, n, 1, 0), randn(r, n, 1, 0)
	var j job
	do, so := j.floats(dst, 2), j.floats(src, 1)
	same := j.floats(src, 0)
	if err := j.run(d, mutant, shaders.Mul(do, so, n), shaders.Mul(same, same, n)); err != nil {
		return 0, err
	}
	got, err := j.result(do, n)
	if err != nil {
		return 0, err
	}
	squared, err := j.result(same, n)
	if err != nil {
		return 0, err
	}
	worst := 0.0
	for i := range dst {
		if math.Float32bits(got[i]) != math.Float32bits(dst[i]*src[i]) || squared[i] != src[i]*src[i] {
			worst = math.Max(worst, math.Abs(float64(got[i]-dst[i]*src[i]))+math.Abs(float64(squared[i]-src[i]*src[i])))
			if worst == 0 {
				worst = math.SmallestNonzeroFloat64
			}
		}
	}
	return worst, nil
}

func checkAdd(d *harness.Driver, mutant string) (float64, error) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 777
	dst, src := randn(r, n, 1, 0), randn(r, n, 1, 0)
	var j job
	do, so := j.floats(dst, 2), j.floats(src, 1)
	same := j.floats(src, 0) // in place: x += x
	if err := j.run(d, mutant, shaders.Add(do, so, n), shaders.Add(same, same, n)); err != nil {
		return 0, err
	}
	got, err := j.result(do, n)
	if err != nil {
		return 0, err
	}
	doubled, err := j.result(same, n)
	if err != nil {
		return 0, err
	}
	worst := 0.0
	for i := range dst {
		if math.Float32bits(got[i]) != math.Float32bits(dst[i]+src[i]) || doubled[i] != 2*src[i] {
			worst = math.Max(worst, math.Abs(float64(got[i]-(dst[i]+src[i])))+math.Abs(float64(doubled[i]-2*src[i])))
			if worst == 0 {
				worst = math.SmallestNonzeroFloat64
			}
		}
	}
	return worst, nil
}
