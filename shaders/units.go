package shaders

// units.go: how the Metal backend compiles the library — not as one text, but as units, each
// the prelude and a few families compiled on their own (newLibraryWithSource per unit), so an
// Apple compiler that rejects the newest code (the simdgroup-matrix matmul, the flash
// attention) costs that family, not Metal: its ops run the unit it falls back to.
//
//	core           layer_norm, gelu_*, add_into, rope2d, attention (scalar)   required
//	matmul         matmul_<dt>, matmul_<dt>_m32 (simdgroup matrices)         falls back to matmul_scalar
//	matmul_scalar  matmul_scalar_<dt> (scalar FMA)                           the fallback
//	flash          attention_hdN (simdgroup matrices)                        falls back to core's attention
//
// Which kernel runs instead of which is FallbackKernel; metal/units.go makes the decision from
// what compiled (and in which pipelines), on every platform, so Linux tests it with a compile
// that fails any unit.
//
// Invariant: every kernel of the library belongs to exactly one unit, every file of the
// library is in some unit, and each unit's text holds every file its own files use (the
// clang check compiles each unit alone). Mutation that would silently break it: a unit that
// leaves out a file it uses (matmul_scalar without matmul_epilogue.metal) — Library() still
// compiles, so only a Mac would see that unit fail, and the fallback would be missing exactly
// when it is needed.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Unit is one library the Metal backend compiles on its own.
type Unit struct {
	Name string // "core", "matmul", "matmul_scalar", "flash"
	// What names it in messages: "matmul (simdgroup matrices)".
	What string
	// Needs are the files compiled with it for what they declare (the prelude always is);
	// their kernels belong to other units.
	Needs []string
	// Files are the files whose kernels it provides.
	Files []string
	// Fallback is the unit whose kernels run where this unit's have no pipeline ("": none),
	// and Instead says so to a user: "the scalar matmul runs instead".
	Fallback, Instead string
	// OnlyFallback: its kernels run only in place of another unit's, so a GPU without them
	// loses nothing while that unit runs.
	OnlyFallback bool
}

// Units are the compile units, in the order the backend compiles them (core first: without it
// nothing runs).
var Units = []Unit{
	{Name: "core", What: "the core kernels (layer norm, GELU, add, rope, scalar attention)",
		Files: []string{"layernorm.metal", "elementwise.metal", "rope.metal", "attention.metal"}},
	{Name: "matmul", What: "matmul (simdgroup matrices)", Needs: []string{"elementwise.metal", "matmul_epilogue.metal"},
		Files: []string{"matmul.metal"}, Fallback: "matmul_scalar", Instead: "the scalar matmul runs instead"},
	{Name: "matmul_scalar", What: "the scalar matmul", Needs: []string{"elementwise.metal"},
		Files: []string{"matmul_epilogue.metal", "matmul_scalar.metal"}, OnlyFallback: true},
	{Name: "flash", What: "flash attention (simdgroup matrices)", Needs: []string{"attention.metal"},
		Files: []string{"flash.metal"}, Fallback: "core",
		Instead: "every head dim runs the scalar attention kernel instead (slower)"},
}

// UnitNamed finds a unit by name.
func UnitNamed(name string) (Unit, bool) {
	for _, u := range Units {
		if u.Name == name {
			return u, true
		}
	}
	return Unit{}, false
}

// Source is the text Metal compiles for the unit: the prelude, then its needed and own files
// in library order, each after its "// ---- name ----" line as in Library().
func (u Unit) Source() string {
	names := []string{Prelude}
	for _, f := range Families {
		if slices.Contains(u.Needs, f) || slices.Contains(u.Files, f) {
			names = append(names, f)
		}
	}
	if n := len(u.Needs) + len(u.Files) + 1; len(names) != n {
		panic(fmt.Sprintf("shaders: unit %s names a file that is not in the library (%d of %d found)", u.Name, len(names), n))
	}
	return concat(names)
}

// Kernels lists, sorted, the kernels the unit provides (those of its own files).
func (u Unit) Kernels() []string { return kernelsOf(concat(u.Files)) }

// FallbackFor says whether the unit is the fallback of another.
func (u Unit) FallbackFor() (Unit, bool) {
	for _, v := range Units {
		if v.Fallback == u.Name {
			return v, true
		}
	}
	return Unit{}, false
}

// UnitOf names the unit that provides kernel ("" for none).
func UnitOf(kernel string) string { return unitOfKernel()[kernel] }

// unitOfKernel maps every kernel to its unit (the backend asks for each op it encodes).
var unitOfKernel = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, u := range Units {
		for _, k := range u.Kernels() {
			m[k] = u.Name
		}
	}
	return m
})

// FallbackKernel names the kernel that runs kernel's ops where kernel has no pipeline: the
// scalar matmul of the same weight dtype for a simdgroup-matrix matmul (either row tile), the
// scalar `attention` for a flash kernel; "" for a kernel without one.
func FallbackKernel(kernel string) string {
	switch {
	case strings.HasPrefix(kernel, "matmul_scalar_"):
		return ""
	case strings.HasPrefix(kernel, "matmul_"):
		return "matmul_scalar_" + strings.TrimSuffix(strings.TrimPrefix(kernel, "matmul_"), "_m32")
	case strings.HasPrefix(kernel, "attention_hd"):
		return "attention"
	}
	return ""
}

// Optional says whether a kernel has a fallback, so a GPU without a pipeline for it still runs
// every op (FallbackKernel).
func Optional(kernel string) bool { return FallbackKernel(kernel) != "" }
