package shaders

// units_test.go: the compile units cover the library exactly — every file in some unit,
// every kernel in one — and every kernel with a fallback names one that exists, in the unit its
// own unit falls back to. (mslcheck_test.go compiles each unit alone with clang.)

import (
	"slices"
	"strings"
	"testing"
)

func TestUnitsPartitionTheLibrary(t *testing.T) {
	if len(Units) == 0 || Units[0].Name != "core" || Units[0].Fallback != "" || Units[0].OnlyFallback {
		t.Fatalf("the first unit must be core, required: %+v", Units[0])
	}
	inUnit := map[string]bool{}
	owner := map[string]string{}
	for _, u := range Units {
		for _, f := range append(append([]string{}, u.Needs...), u.Files...) {
			if !slices.Contains(Families, f) {
				t.Errorf("unit %s names %s, which is not in the library", u.Name, f)
			}
			inUnit[f] = true
		}
		if u.Fallback != "" {
			if _, ok := UnitNamed(u.Fallback); !ok || u.Fallback == u.Name {
				t.Errorf("unit %s falls back to %q, which is no other unit", u.Name, u.Fallback)
			}
			if u.Instead == "" {
				t.Errorf("unit %s has a fallback but no Instead to tell a user what runs", u.Name)
			}
		}
		if _, isFallback := u.FallbackFor(); u.OnlyFallback && (!isFallback || u.Fallback != "") {
			t.Errorf("unit %s runs only as a fallback, but is no unit's fallback or has one itself", u.Name)
		}
		if !strings.HasPrefix(u.Source(), "// ---- "+Prelude) {
			t.Errorf("unit %s does not start with the prelude", u.Name)
		}
		if len(u.Kernels()) == 0 {
			t.Errorf("unit %s provides no kernel", u.Name)
		}
		for _, k := range u.Kernels() {
			if prev, dup := owner[k]; dup {
				t.Errorf("kernel %s is in units %s and %s", k, prev, u.Name)
			}
			owner[k] = u.Name
		}
	}
	for _, f := range Families {
		if !inUnit[f] {
			t.Errorf("%s is in the library but in no unit: Metal never compiles it", f)
		}
	}
	for _, k := range Kernels() {
		if owner[k] == "" {
			t.Errorf("kernel %s is in no unit", k)
		}
		if UnitOf(k) != owner[k] {
			t.Errorf("UnitOf(%s) = %q, want %q", k, UnitOf(k), owner[k])
		}
		fb := FallbackKernel(k)
		if fb == "" {
			continue
		}
		u, _ := UnitNamed(owner[k])
		if u.Fallback == "" || UnitOf(fb) != u.Fallback {
			t.Errorf("%s (unit %s) falls back to %s (unit %q): not the unit %s falls back to (%q)", k, owner[k], fb, UnitOf(fb), owner[k], u.Fallback)
		}
	}
	// Every kernel of a unit with a fallback has a fallback kernel: the unit can go whole.
	for _, u := range Units {
		for _, k := range u.Kernels() {
			if u.Fallback != "" && FallbackKernel(k) == "" {
				t.Errorf("%s of unit %s (which falls back to %s) has no fallback kernel", k, u.Name, u.Fallback)
			}
		}
	}
}

func TestFallbackKernels(t *testing.T) {
	for k, want := range map[string]string{
		"matmul_f32": "matmul_scalar_f32", "matmul_bf16_m32": "matmul_scalar_bf16", "matmul_f16": "matmul_scalar_f16",
		"attention_hd72": "attention", "attention": "", "matmul_scalar_bf16": "", "layer_norm": "",
	} {
		if got := FallbackKernel(k); got != want {
			t.Errorf("FallbackKernel(%s) = %q, want %q", k, got, want)
		}
		if Optional(k) != (want != "") {
			t.Errorf("Optional(%s) = %v", k, Optional(k))
		}
	}
	// The scalar matmul takes what the simdgroup one takes, on a grid that covers the op.
	o := Operand{Handle: 1}
	for _, wt := range []DType{F32, BF16, F16} {
		for _, s := range [][3]int{{130, 45, 65}, {1000, 40, 970}, {1, 1, 1}} {
			rows, in, out := s[0], s[1], s[2]
			ep := Epilogue{GELU: true, Residual: o}
			simd := MatMul(o, o, o, o, wt, wt, rows, in, out, ep)
			scalar := MatMulOn(MatMulScalarKernel(wt), o, o, o, o, wt, wt, rows, in, out, ep)
			if scalar.Kernel != FallbackKernel(simd.Kernel) || MatMulOn(simd.Kernel, o, o, o, o, wt, wt, rows, in, out, ep).Kernel != simd.Kernel {
				t.Errorf("%s %v: MatMulOn ran %s for the fallback of %s", wt, s, scalar.Kernel, simd.Kernel)
			}
			if string(scalar.Params) != string(simd.Params) || len(scalar.Buffers) != len(simd.Buffers) {
				t.Errorf("%s %v: the scalar kernel's params or buffers differ from the simdgroup kernel's", wt, s)
			}
			if n := scalar.Threads[0] * scalar.Threads[1] * scalar.Threads[2]; n != ThreadgroupSize(scalar.Kernel) {
				t.Errorf("%s: %d threads, ThreadgroupSize says %d", scalar.Kernel, n, ThreadgroupSize(scalar.Kernel))
			}
			if scalar.Groups[0]*matmulScalarTile < out || scalar.Groups[1]*matmulScalarTile < rows {
				t.Errorf("%s %v: grid %v does not cover the op", scalar.Kernel, s, scalar.Groups)
			}
			if scalar.Cost.FLOPs != simd.Cost.FLOPs || scalar.Cost.MatrixFLOPs != 0 || scalar.Cost.ScalarSlots < scalar.Cost.FLOPs/2 {
				t.Errorf("%s %v: cost %+v", scalar.Kernel, s, scalar.Cost)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MatMulOn accepted the scalar kernel of another dtype")
		}
	}()
	MatMulOn(MatMulScalarKernel(F16), o, o, o, o, BF16, BF16, 7, 7, 7, Epilogue{})
}
